"""Creation-time checks: turn a spec into an item with its reference, or reject it with its reason.

Per kind (docs/augmentations.md states each contract):

- execute: the command runs twice in the sandbox with identical output; the facts asked for are
  read from that output;
- debug: the test is a FAIL_TO_PASS test in a file the hidden test patch leaves alone (the agent's
  checkout holds it as it fails); it fails on the untouched repository, no test patch applied (twice,
  identically) with a readable failure; with the gold patch it passes; its location is code
  the gold patch changes; the turn asks for a diagnosis, never a fix; the repository stays unchanged;
- planning: the requirement is a later issue turn's own text; the files and symbols of the gold
  patch it points at are the reference (at least one not already named by the turn);
- review: the seeded defect is a catalogue mutation of the gold patch; the gold patch passes the
  task's tests, the mutated one fails some of them (twice, identically).

An augmentation turn is made from a spec (:class:`AugmentSpec`, proposed or hand-written).

A spec names the kind and its parameters (command, test, requirement, seeded defect, claimed
locations); the checks run it and return a
:class:`~swe_taskflow.schema.QAItem` with its reference, proof and status. Hand-written specs
(the example's deliberately broken items) are read from a JSONL file and carry
``"provenance": "hand-written"``.

Every check is recorded (name, passed, detail); the first failing one rejects the item and is its
reason. A sandbox that could not judge gives ``error``, never a rejection.

The checks' sandbox scripts are published as each item's ``proof_script``. Every script copies the read-only repository (/repo) to a scratch folder under /tmp, applies the
patches it carries (review only: the task's test patch and the change under review), runs one command
there and prints what the reference is read from: the runner's outcome and error lines (filtered
by :data:`~swe_taskflow.turns.outcomes.KEEP_ERE`, durations removed) or, for an ``output``
execute turn, the command's own output. It always ends with ``swe-taskflow: exit status N`` and
exits 0 once the command ran, so the proof verdict says whether the sandbox worked and the
repository stayed unchanged, and the printed text says what happened. A script is self-contained:
an auditor re-runs it on a checkout of the task's base commit (``verify --reprove``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from swe_taskflow.turns import mutate as mut
from swe_taskflow.turns.attribute import attribute, in_patch, test_locations
from swe_taskflow.turns.diffs import Location, parse_patch, symbol_of_line
from swe_taskflow.turns.kinds import AUGMENT_KINDS, kind as kind_of
from swe_taskflow.turns.reference import EXECUTE_STYLES, debug_facts, execute_facts, failing_tests
from swe_taskflow.turns.score import normalize, planning_entries, symbol_named, file_named
from swe_taskflow.turns.outcomes import DURATION_SED, KEEP_ERE, outcome_of, parse_outcomes, same_test
from swe_taskflow.turns.textcheck import check_text
from swe_taskflow.turns.visible import hidden_test_file
from swe_taskflow.errors import InputError
from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.proofs import INFRA_ERROR, ProofReport
from swe_taskflow.schema import QAItem, Record, Task

from .writers import WriterError

MAX_REVIEW_DIFF_LINES = 200


@dataclass(frozen=True)
class AugmentSpec(Record):
    """One proposed augmentation turn."""

    check_types: ClassVar[bool] = False   # __post_init__ checks kind and style; other fields are free text

    item_id: str
    instance_id: str
    kind: str
    #: The turn text; empty: the writer words it once the reference is known.
    text: str = ""
    #: execute: the command to run (from the repository root) and what to report (EXECUTE_STYLES).
    command: str = ""
    style: str = ""
    #: debug: the FAIL_TO_PASS test to diagnose.
    test: str = ""
    #: planning: the split part holding the requirement, and the requirement's text.
    requirement_part: int = -1
    requirement: str = ""
    #: review: the seeded defect (a site of swe_taskflow.turns.mutate, as its dict).
    mutation: Mapping[str, Any] | None = None
    #: debug / planning: locations a hand-written spec claims (checked against the gold patch);
    #: empty: derived from the gold patch.
    locations: tuple[Mapping[str, Any], ...] = ()
    pool: str = "generated"
    generator: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in AUGMENT_KINDS:
            raise InputError("unknown augmentation kind", field="kind", actual=self.kind, expected=AUGMENT_KINDS)
        if self.kind == "execute" and self.style not in EXECUTE_STYLES:
            raise InputError("unknown execute style", field="style", actual=self.style, expected=EXECUTE_STYLES)
        object.__setattr__(self, "locations", tuple(dict(x) for x in self.locations))


def read_specs(path, *, pool: str, cls=AugmentSpec) -> list:
    """Hand-written specs (``cls`` records) of a JSONL file; each row must say ``"provenance": "hand-written"``."""
    out = []
    for n, obj in read_jsonl(path):
        if obj.get("provenance") != "hand-written":
            raise InputError("a spec file row must be labelled hand-written", path=str(path), row=n,
                             field="provenance", expected="hand-written", actual=obj.get("provenance"))
        spec = cls.from_dict({**obj, "pool": pool, "generator": {"name": "hand-written",
                                                                          "provenance": "hand-written"}},
                                     where=str(path), row=n)
        out.append(spec)
    return out


def read_spec_files(files, resolve, *, cls=AugmentSpec) -> list:
    """The specs of a recipe's spec ``files`` (made absolute by ``resolve``), in order; a file's stem is its pool."""
    return [spec for f in files for spec in read_specs(resolve(f), pool=Path(f).stem, cls=cls)]


WORK = "/tmp/swe-taskflow-work"
OUT = "/tmp/swe-taskflow-out.txt"
_DELIM = "SWE_TASKFLOW_PATCH_EOF"
MAX_OUTPUT_BYTES = 1500
#: Every check script's first lines (``kind``: the check, ``doc``: where its contract is written).
HEAD = ("#!/bin/sh\n# swe-taskflow {kind} check (generated; {doc})\nset -u\n"
        'export PATH="${{PATH:-/usr/local/bin:/usr/bin:/bin}}" HOME=/tmp PYTHONDONTWRITEBYTECODE=1\n')
#: A fresh copy of the read-only repository in WORK, and into it.
COPY = (f'rm -rf {WORK} && mkdir -p {WORK} && cp -R /repo/. {WORK}/ '
        "|| { echo 'swe-taskflow: copying the repository failed' >&2; exit 3; }\n"
        f"cd {WORK} || exit 3\n")


def apply_patch(patch: str, label: str) -> str:
    """Shell lines that apply ``patch`` (a heredoc) in the current folder, or exit 4 naming ``label``."""
    if not patch.strip():
        return ""
    if _DELIM in patch:
        raise ValueError("a patch holds the script's heredoc delimiter")
    body = patch if patch.endswith("\n") else patch + "\n"
    return (f"git -c safe.directory='*' apply --whitespace=nowarn - <<'{_DELIM}' "
            f"|| {{ echo 'swe-taskflow: {label} does not apply' >&2; exit 4; }}\n{body}{_DELIM}\n")


def run_in_copy(command: str, patches: tuple[tuple[str, str], ...], kind: str, doc: str) -> str:
    """Head, copy, apply ``patches`` ((label, diff), in order), run ``command`` into OUT, its status in $status."""
    return (HEAD.format(kind=kind, doc=doc) + COPY + "".join(apply_patch(p, label) for label, p in patches)
            + f"( {command}\n) > {OUT} 2>&1 < /dev/null\nstatus=$?\n")


def script(command: str, *, patches: tuple[tuple[str, str], ...] = (), raw_output: bool = False,
           kind: str = "") -> str:
    """A check script: copy, apply ``patches``, run ``command``, print, exit 0."""
    if raw_output:
        show = f"head -c {MAX_OUTPUT_BYTES} {OUT}\necho\n"
    else:
        show = f"grep -E {shlex.quote(KEEP_ERE)} {OUT} | sed -E {shlex.quote(DURATION_SED)}\n"
    tail = 'echo "swe-taskflow: exit status $status"\nexit 0\n'
    return run_in_copy(command, patches, kind, "docs/augmentations.md") + show + tail


@dataclass
class TaskContext:
    """What the checks of one task read: the task, its split parts, a base checkout and a sandbox."""

    task: Task
    parts: tuple[str, ...] = ()
    repo: Path | None = None
    sandbox: Any = None
    image: str | None = None
    memo: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def sources(self) -> dict[str, str]:
        """Base text of the Python files the gold patch touches (exact enclosing symbols)."""
        out = {}
        if self.repo is not None and self.task.patch:
            for fp in parse_patch(self.task.patch):
                p = self.repo / (fp.old_path or "")
                if fp.old_path and fp.old_path.endswith(".py") and p.is_file():
                    out[fp.old_path] = p.read_text(encoding="utf-8", errors="replace")
        return out

    def no_sandbox_reason(self, *, tests: bool = True) -> str:
        """Why the task's checks cannot run code ('' when they can); ``tests``: they run its test command."""
        if self.repo is None:
            return "no checkout of the task's repository"
        if self.sandbox is None:
            return "no sandbox"
        return "the task has no test command" if tests and not self.task.test_command else ""


class Rejected(Exception):
    def __init__(self, check: str, detail: str, status: str = "rejected") -> None:
        super().__init__(detail)
        self.check, self.detail, self.status = check, detail, status


class CheckLog:
    """The checks an item went through, in order, and what was derived so far (kept on a rejection)."""

    def __init__(self) -> None:
        self.checks: list[dict[str, Any]] = []
        self.got: dict[str, Any] = {}

    def ok(self, name: str, detail: str = "") -> None:
        self.checks.append({"name": name, "passed": True, "detail": detail})

    def require(self, cond: bool, name: str, detail: str, *, ok_detail: str = "") -> None:
        self.checks.append({"name": name, "passed": bool(cond), "detail": ok_detail if cond else detail})
        if not cond:
            raise Rejected(name, detail)


def run_twice(ctx: TaskContext, rec: CheckLog, text: str, *, patched: str = "") -> ProofReport:
    """Run the published script twice; both must pass (repository unchanged) and print the same bytes."""
    runs = []
    for _ in range(2):
        r = ctx.sandbox.run_patched(ctx.repo, patched, text, image=ctx.image) if patched else \
            ctx.sandbox.run(ctx.repo, text, image=ctx.image)
        if r.status == INFRA_ERROR:
            rec.checks.append({"name": "sandbox-run", "passed": False, "detail": r.reason})
            raise Rejected("sandbox-run", r.reason, status="error")
        why = re.sub(r" after [0-9.]+s", "", r.reason)      # no measured durations in recorded reasons
        rec.require(r.status == "passed", "sandbox-run", f"{r.status}: {why}", ok_detail=f"{r.sandbox} {r.image}")
        runs.append(r)
    rec.require(runs[0].stdout_sha256 == runs[1].stdout_sha256, "repeatable",
                "not repeatable: two runs of the same command printed different output",
                ok_detail=f"two runs, stdout sha256 {runs[0].stdout_sha256[:12]}")
    return runs[0]


def word_turn(spec, writer, material: Mapping[str, str], rec: CheckLog) -> str:
    """The spec's own text, else the writer's wording of ``material`` (a writer failure rejects the item)."""
    if spec.text:
        return spec.text
    try:
        text = writer.write(spec.kind, material, item_id=spec.item_id, style=spec.style)
    except WriterError as exc:
        raise Rejected("writer", str(exc)) from None
    rec.got["question"] = text
    return text


def _text_ok(rec: CheckLog, kind: str, text: str, **kw: Any) -> None:
    bad = check_text(kind, text, **kw)
    rec.require(not bad, "text-contract", "; ".join(f"{k}: {d}" for k, d in bad), ok_detail="kept")


def require_sandbox(ctx: TaskContext, rec: CheckLog, *, tests: bool = False) -> None:
    """The check runs code: it needs a checkout of the repository and a sandbox (and the test command)."""
    why = ctx.no_sandbox_reason(tests=tests)
    rec.require(not why, "sandbox-available", why)


def review_change(patch: str, site, rec: CheckLog) -> str:
    """The change under review (the gold patch with the seeded defect), at most MAX_REVIEW_DIFF_LINES long."""
    diff = mut.review_diff(patch, site)
    n = diff.count("\n") + 2
    rec.require(n <= MAX_REVIEW_DIFF_LINES, "diff-size", f"the change under review has {n} lines "
                f"(at most {MAX_REVIEW_DIFF_LINES})")
    return diff


def site_location(patch: str, site) -> tuple[str, list[dict[str, Any]]]:
    """The enclosing symbol of a seeded defect's line and its one location (``site.index`` counts patch lines)."""
    sym = symbol_of_line(patch, site.index)
    return sym, [{"path": site.path, "symbol": sym, "line_start": site.line, "line_end": site.line}]


def check_execute(spec: AugmentSpec, ctx: TaskContext, writer, rec: CheckLog) -> dict[str, Any]:
    require_sandbox(ctx, rec)
    text = script(spec.command, raw_output=spec.style == "output", kind="execute")
    base = run_twice(ctx, rec, text)
    facts = execute_facts(spec.style, base.stdout_excerpt)
    rec.require(bool(facts), "facts", f"the output holds no {spec.style} facts", ok_detail=f"{len(facts)} facts")
    turn = word_turn(spec, writer, {"command": spec.command}, rec)
    _text_ok(rec, "execute", turn, command=spec.command, facts=facts)
    summary = ", ".join(f"{f['name']} {f['value']}" for f in facts)
    return {"text": turn, "script": text, "report": base, "facts": facts, "command": spec.command,
            "reference_answer": f"Running `{spec.command}` gives: {summary}."}


def check_debug(spec: AugmentSpec, ctx: TaskContext, writer, rec: CheckLog) -> dict[str, Any]:
    task = ctx.task
    rec.require(any(same_test(t, spec.test) for t in task.fail_to_pass), "fail-to-pass",
                f"{spec.test!r} is not a FAIL_TO_PASS test of the task")
    hidden = hidden_test_file(spec.test, task.test_patch)
    rec.require(hidden is None, "visible-in-checkout", f"the test sits in {hidden}, which the hidden test patch adds "
                "or changes: the agent's checkout does not hold it as it fails")
    require_sandbox(ctx, rec, tests=True)
    command = task.test_command
    text = script(command, kind="debug")      # the agent's checkout as it is: no hidden test patch
    base = run_twice(ctx, rec, text)
    facts, problem = debug_facts(spec.test, base.stdout_excerpt)
    rec.got.update(proof_script=text, facts=facts or ())
    rec.require(not problem, "fails-before-patch", problem, ok_detail=facts[-1]["value"] if facts else "")
    fixed = ctx.sandbox.run_patched(ctx.repo, task.patch, text, image=ctx.image)
    if fixed.status == INFRA_ERROR:
        raise Rejected("fixed-by-gold-patch", fixed.reason, status="error")
    after = outcome_of(parse_outcomes(fixed.stdout_excerpt), spec.test)
    rec.require(after == "passed", "fixed-by-gold-patch", f"after the gold patch the test is {after or 'not run'}")
    locs = _claimed_or(spec, ctx, lambda: test_locations(spec.test, facts[-1]["value"], task.patch,
                                                         sources=ctx.sources))
    rec.ok("location-in-gold-patch", f"{len(locs)} location(s)")
    rec.got["locations"] = locs
    failure = facts[-1]["value"]
    turn = word_turn(spec, writer, {"test": spec.test, "failure": failure}, rec)
    _text_ok(rec, "debug", turn, locations=locs)
    where = "; ".join(f"{x['path']} ({x['symbol'] or 'module level'}, lines {x['line_start']}-{x['line_end']})"
                      for x in locs)
    return {"text": turn, "script": text, "report": base, "facts": facts, "locations": locs, "command": command,
            "reference_answer": f"`{spec.test}` fails with `{failure}`. The cause lies in code the fix changes: {where}."}


def _claimed_or(spec: AugmentSpec, ctx: TaskContext, derive: Callable[[], list[Location]]) -> list[dict[str, Any]]:
    rec_locs: list[Location]
    if spec.locations:
        rec_locs = [Location.from_dict(x) for x in spec.locations]
        missing = [x for x in rec_locs if not in_patch(x, ctx.task.patch, sources=ctx.sources)]
        if missing:
            raise Rejected("location-in-gold-patch", "the gold patch changes none of: " +
                           ", ".join(f"{x.path}:{x.symbol or '*'}" for x in missing))
    else:
        rec_locs = derive()
        if not rec_locs:
            raise Rejected("location-in-gold-patch", "the gold patch changes no code this item points at")
    return [x.to_dict() for x in rec_locs]


def check_planning(spec: AugmentSpec, ctx: TaskContext, writer, rec: CheckLog) -> dict[str, Any]:
    parts = ctx.parts
    ok = 0 <= spec.requirement_part < len(parts) and bool(spec.requirement.strip()) and \
        normalize(spec.requirement) in normalize(parts[spec.requirement_part])
    rec.require(ok, "requirement-in-part", f"the requirement is not text of split part {spec.requirement_part}")
    locs = _claimed_or(spec, ctx, lambda: attribute(spec.requirement, ctx.task.patch, sources=ctx.sources))
    rec.ok("location-in-gold-patch", f"{len(locs)} location(s)")
    rec.got.update(locations=locs, facts=[{"name": "requirement", "value": spec.requirement}])
    turn = word_turn(spec, writer, {"requirement": spec.requirement}, rec)
    _text_ok(rec, "planning", turn, requirement=spec.requirement)
    t = normalize(turn)
    paths = tuple(x["path"] for x in locs)
    unstated = [v for k, v, p in planning_entries({"locations": locs})
                if not (file_named(v, t, paths) if k == "file" else symbol_named(v, p, t))]
    rec.require(bool(unstated), "unstated-reference", "the turn already names every file and symbol of its reference",
                ok_detail=f"{len(unstated)} reference entries not named by the turn")
    listing = "; ".join(f"{x['path']}" + (f" ({x['symbol']})" if x["symbol"] else "") for x in locs)
    return {"text": turn, "locations": locs, "requirement_part": spec.requirement_part,
            "facts": [{"name": "requirement", "value": spec.requirement}],
            "reference_answer": f"A plan for this requirement changes: {listing}."}


def check_review(spec: AugmentSpec, ctx: TaskContext, writer, rec: CheckLog) -> dict[str, Any]:
    task = ctx.task
    site = mut.find_site(task.patch, spec.mutation or {}) if task.patch else None
    rec.require(site is not None, "mutation-in-catalogue", "the seeded defect is not a catalogue mutation of the gold patch",
                ok_detail=f"{site.operator if site else ''}")
    diff = review_change(task.patch, site, rec)
    require_sandbox(ctx, rec, tests=True)
    command = task.test_command
    tests = list(task.fail_to_pass) + list(task.pass_to_pass)
    if "review-control" not in ctx.memo:
        control = script(command, patches=(("the test patch", task.test_patch), ("the gold patch", task.patch)),
                         kind="review")
        ctx.memo["review-control"] = ctx.sandbox.run(ctx.repo, control, image=ctx.image)
    control = ctx.memo["review-control"]
    if control.status == INFRA_ERROR:
        raise Rejected("gold-patch-passes", control.reason, status="error")
    bad = failing_tests(control.stdout_excerpt, tests)
    rec.require(control.status == "passed" and not bad and bool(parse_outcomes(control.stdout_excerpt)),
                "gold-patch-passes", f"with the gold patch these tests fail: {bad}" if bad else
                f"the control run did not run the tests ({control.status}: {control.reason})")
    text = script(command, patches=(("the test patch", task.test_patch), ("the change under review", diff + "\n")),
                  kind="review")
    base = run_twice(ctx, rec, text)
    caught = failing_tests(base.stdout_excerpt, tests)
    rec.require(bool(caught), "defect-caught", "the seeded defect survives: every test passes with it",
                ok_detail=f"{len(caught)} test(s) fail")
    sym, locs = site_location(task.patch, site)
    turn = word_turn(spec, writer, {"diff": diff}, rec)
    _text_ok(rec, "review", turn, diff=diff, mutation=site.to_dict())
    return {"text": turn, "script": text, "report": base, "facts": [{"name": "failing_test", "value": t} for t in caught],
            "locations": locs, "mutation": site.to_dict(), "command": command,
            "reference_answer": f"The change has a defect in {site.path} line {site.line}"
                                + (f" ({sym})" if sym else "") + f": `{site.before.strip()}` became "
                                f"`{site.after.strip()}` ({site.operator}); with it {', '.join(caught)} fail."}


def checked_item(spec, ctx: TaskContext, writer, check, **fields: Any) -> QAItem:
    """Run ``check(spec, ctx, writer, record)`` and build the item: ``accepted`` with what the check derived, or
    ``rejected``/``error`` with the first failing check as its reason (augmentation and stress turns alike).
    ``fields``: the item's kind-specific fields known before the checks."""
    rec = CheckLog()
    generator = dict(spec.generator)
    if not spec.text:   # the writer words the turn: its identity is part of the item's provenance
        info_for = getattr(writer, "info_for", None)
        generator["writer"] = dict(info_for(spec.kind) if callable(info_for) else getattr(writer, "info", {}))
    base = dict(question_id=spec.item_id, instance_id=spec.instance_id, question=spec.text, reference_answer="",
                pool=spec.pool, intent=kind_of(spec.kind).intent, kind=spec.kind, generator=generator, **fields)
    try:
        got = check(spec, ctx, writer, rec)
    except Rejected as exc:
        if not rec.checks or rec.checks[-1]["name"] != exc.check:
            rec.checks.append({"name": exc.check, "passed": False, "detail": exc.detail})
        return QAItem(**{**base, **rec.got}, status=exc.status, reason=f"{exc.check}: {exc.detail}",
                      checks=rec.checks)
    report = got.pop("report", None)
    item = {**base, "question": got.pop("text"), "reference_answer": got.pop("reference_answer"),
            "proof_script": got.pop("script", ""), "proof_report": None if report is None else report.to_dict(),
            **got}
    return QAItem(**item, status="accepted", reason="", checks=rec.checks)


def item_fields(spec: AugmentSpec) -> dict[str, Any]:
    """An augmentation item's kind-specific fields known before its checks run (:func:`checked_item`)."""
    return dict(requirement_part=spec.requirement_part, command=spec.command,
                mutation=dict(spec.mutation) if spec.mutation else None,
                **({"facts": [{"name": "test", "value": spec.test}]} if spec.kind == "debug" else {}))


__all__ = ["AugmentSpec", "read_specs", "read_spec_files", "TaskContext", "checked_item", "item_fields",
           "check_execute", "check_debug", "check_planning", "check_review", "MAX_REVIEW_DIFF_LINES", "CheckLog", "Rejected", "run_twice",
           "word_turn", "require_sandbox", "review_change", "site_location", "script", "run_in_copy", "apply_patch",
           "WORK", "OUT", "HEAD", "COPY", "MAX_OUTPUT_BYTES"]
