"""Mine repository questions from a solving trajectory (Appendix E question-generation contract).

One generator call proposes up to ``max_questions`` questions; each then goes through deterministic
checks (fields, evidence present in the repository, leakage against the gold patch, validity before
the patch) and a second reviewer call. Every proposal ends as a :class:`QAItem`: ``candidate`` when it
passed, ``rejected`` with the reason otherwise (a malformed reply is one rejected item, never a crash).
Proof execution is a later stage (builder/proofs); ``proof_report`` stays ``None`` here.

Leakage checks are deterministic: a question leaks when it (or its reference answer) repeats a line the
patch adds, or names an identifier that only the patch introduces; its evidence is invalid before the patch
when it points at a file the patch creates or a symbol only the patch defines.

A trajectory is a mini-swe-agent ``.traj.json`` (or ``.traj.json.gz``). Questions are mined only from a run
that solved the issue (Appendix E): the run must have ended by submitting (``exit_status``), with a non-empty
patch, and, where a results file records it, the submission must have resolved the task.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_taskflow import untrusted
from swe_taskflow.turns.diffs import parse_patch
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.safepath import is_inside
from swe_taskflow.schema import QAItem, Task

from ..llm.prompts import load_prompt, parse_json_object, render

#: ``info.exit_status`` values of a run that ended by submitting its patch (mini-swe-agent).
SOLVED_EXIT_STATUSES = ("Submitted",)

_BASH = re.compile(r"```bash\s*\n(.*?)```", re.S)
_PR = re.compile(r"<pr_description>(.*?)</pr_description>", re.S)
_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyx|pyi|js|ts|tsx|jsx|go|rs|java|rb|php|c|h|cpp|"
                   r"cfg|toml|ini|ya?ml|json|rst|md|txt|html))\b")


@dataclass(frozen=True)
class Trajectory:
    """What a solving run shows: the issue it got, its commands, the files it touched, its patch."""

    instance_id: str
    issue: str
    commands: tuple[str, ...]
    files_read: tuple[str, ...]
    submission: str
    exit_status: str
    trajectory_format: str
    path: str


def read_trajectory(path: str | Path) -> Trajectory:
    """Parse one trajectory file; a malformed file is an :class:`InputError` naming the field."""
    path = Path(path)
    try:   # through swe_taskflow.untrusted: no link followed, no FIFO opened, bounded (decompressed too)
        data = untrusted.parse_json(untrusted.read_maybe_gzip(path, "trajectory file"), path=path,
                                    kind="trajectory file")
    except InputError as exc:
        raise InputError(f"unreadable trajectory: {exc.message}", path=str(path), row=exc.row) from None
    msgs = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(msgs, list):
        raise InputError("trajectory has no message list", path=str(path), field="messages")
    issue, commands = "", []
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            raise InputError("message without text content", path=str(path), field=f"messages[{i}].content")
        if m.get("role") == "user" and not issue:
            pr = _PR.search(m["content"])
            if pr:
                issue = pr.group(1).replace("Consider the following PR description:", "", 1).strip()
        if m.get("role") == "assistant":
            commands += [c.strip() for c in _BASH.findall(m["content"])]
    seen: dict[str, None] = {}
    for c in commands:
        for f in _FILE.findall(c):
            if not f.startswith(("/tmp", ".")) and "reproduce" not in f:
                seen.setdefault(f.lstrip("./"), None)
    info = data.get("info") or {}
    return Trajectory(instance_id=str(data.get("instance_id") or path.name.split(".traj")[0]), issue=issue,
                      commands=tuple(commands), files_read=tuple(seen), submission=str(info.get("submission") or ""),
                      exit_status=str(info.get("exit_status") or ""),
                      trajectory_format=str(data.get("trajectory_format") or ""), path=str(path))


def find_trajectory(folder: str | Path, instance_id: str) -> Path | None:
    """``<id>.traj.json(.gz)`` directly in ``folder`` or in ``folder/<id>/``."""
    folder = Path(folder)
    if not is_inside(folder, instance_id):   # an id from data never names a path outside the folder
        return None
    for sub in (folder, folder / instance_id):
        if sub != folder and not _real_dir(sub):   # a link to a folder elsewhere is never entered
            continue
        for name in (f"{instance_id}.traj.json", f"{instance_id}.traj.json.gz"):
            if os.path.lexists(sub / name):   # read_trajectory refuses a link, a FIFO, a device (never opened)
                return sub / name
    return None


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def load_resolved(path: str | Path) -> dict[str, bool]:
    """Per-instance resolution flags from a results file: a mini-swe-agent ``results_summary.json``
    (``{"instances": [{"instance_id", "resolved"}, ...]}``) or an ``{instance_id: bool}`` mapping
    (SWE-Bench Pro ``eval_results``)."""
    path = Path(path)
    data = untrusted.read_json(path, "results file")
    rows = data.get("instances") if isinstance(data, dict) and "instances" in data else None
    if rows is None:
        if not isinstance(data, dict) or not all(isinstance(v, bool) for v in data.values()):
            raise InputError("not a results file: expected {instance_id: bool} or {'instances': [...]}", path=str(path))
        return dict(data)
    out = {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("instance_id"), str) or not isinstance(r.get("resolved"), bool):
            raise InputError("results row needs instance_id and a boolean resolved", path=str(path), row=i,
                             field="resolved")
        out[r["instance_id"]] = r["resolved"]
    return out


def solving_problem(traj: Trajectory, resolved: bool | None = None) -> str:
    """Why ``traj`` cannot count as a solving run ('' when it can). ``resolved``: the task's flag from a
    results file, or None when no file records it (then the exit status and patch decide)."""
    if traj.exit_status not in SOLVED_EXIT_STATUSES:
        return f"exit status {traj.exit_status or '(none)'!r}: the run did not submit a solution"
    if not traj.submission.strip():
        return "the run submitted an empty patch"
    if resolved is False:
        return "the submitted patch did not resolve the task (results file)"
    return ""


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF = re.compile(r"\b(?:def|class|function|func|const|let|var|type|interface)\s+([A-Za-z_][\w]*)")
_WS = re.compile(r"\s+")
#: Added lines shorter than this (after whitespace collapse) are too generic to count as a leak.
MIN_LINE_CHARS = 20


@dataclass(frozen=True)
class PatchFacts:
    """What a unified diff adds: lines, identifiers new to it, files it creates, names it defines."""

    added_lines: tuple[str, ...]
    new_identifiers: frozenset[str]
    new_files: frozenset[str]
    defined: frozenset[str]


def _code_like(name: str) -> bool:
    return "_" in name.strip("_") or bool(re.search(r"[a-z][A-Z]", name))


_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.\w+$|\.(test|spec)\.\w+$")


def _is_test_file(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def patch_facts(patch: str, *, where: str = "patch") -> PatchFacts:
    """Facts of the non-test part of a unified diff (tests a solution adds are not the solution);
    a malformed diff is an InputError naming ``where`` and the line."""
    files = [fp for fp in parse_patch(patch, where=where) if not _is_test_file(fp.path)]
    lines = [ln for fp in files for h in fp.hunks for ln in h.lines]
    added = [ln.text for ln in lines if ln.op == "+"]
    old_ids = set(_IDENT.findall("\n".join(ln.text for ln in lines if ln.op != "+")))
    add_text = "\n".join(added)
    defined = set(_DEF.findall(add_text)) - old_ids
    new_ids = {t for t in set(_IDENT.findall(add_text)) - old_ids if _code_like(t)} | defined
    new_files = {fp.new_path for fp in files if fp.old_path is None}
    return PatchFacts(tuple(a for a in added if a.strip()), frozenset(new_ids), frozenset(new_files), frozenset(defined))


def leaks(text: str, facts: PatchFacts) -> list[str]:
    """Reasons ``text`` gives the patch away (empty when it does not)."""
    norm = _WS.sub(" ", text)
    out = []
    for line in facts.added_lines:
        ln = _WS.sub(" ", line).strip()
        if len(ln) >= MIN_LINE_CHARS and ln in norm:
            out.append(f"repeats a line the patch adds: {ln[:80]!r}")
    words = set(_IDENT.findall(text))
    for ident in sorted(facts.new_identifiers & words):
        out.append(f"names {ident!r}, which only the patch introduces")
    return out


def evidence_problems(evidence: list[dict], facts: PatchFacts) -> list[str]:
    """Evidence that would not hold before the patch."""
    out = []
    for e in evidence:
        p = str(e.get("path", "")).lstrip("./")
        if p in facts.new_files:
            out.append(f"evidence file {p!r} only exists after the patch")
        if e.get("symbol") and str(e["symbol"]).split(".")[-1].rstrip("()") in facts.defined:
            out.append(f"evidence symbol {e['symbol']!r} is defined by the patch")
    return out


STAGE_GENERATE = "qa.generate"
STAGE_REVIEW = "qa.review"
#: Context budget for file excerpts shown to the generator.
MAX_FILE_CHARS = 4000
MAX_FILES = 6
MAX_COMMANDS = 40


def _repo_text(repo_dir: Path, rel: str, limit: int | None = None) -> str | None:
    """A file of the checkout named by the trajectory or the model (untrusted): None when the name leaves the
    checkout, or the file is a link, a FIFO, a device or too large (never read, never sent to a model)."""
    rel = rel.lstrip("./")
    if not rel or not is_inside(repo_dir, rel):
        return None
    try:
        if limit is None:
            raw = untrusted.read_bytes(repo_dir / rel, "repository file", root=repo_dir)
        else:
            raw, _ = untrusted.read_prefix(repo_dir / rel, "repository file", limit * 4, root=repo_dir)
    except InputError:
        return None
    return raw.decode("utf-8", errors="replace")


def _files_context(traj: Trajectory, repo_dir: Path | None) -> str:
    if repo_dir is None or not repo_dir.is_dir():
        return "\n".join(traj.files_read[:20]) or "(no repository checkout available)"
    parts = []
    for rel in traj.files_read:
        if len(parts) >= MAX_FILES:
            break
        text = _repo_text(repo_dir, rel, MAX_FILE_CHARS)
        if text is not None:
            parts.append(f"--- {rel}\n{text[:MAX_FILE_CHARS]}")
    return "\n\n".join(parts) or "\n".join(traj.files_read[:20])


def _qid(instance_id: str, i: int, question: str) -> str:
    return f"{instance_id}::q{i}-{hashlib.sha256(question.encode('utf-8')).hexdigest()[:8]}"


def _evidence_ok(ev: Any) -> bool:
    return isinstance(ev, list) and bool(ev) and all(isinstance(e, dict) and isinstance(e.get("path"), str)
                                                       and e["path"] for e in ev)


def _repo_problems(evidence: list[dict], repo_dir: Path | None) -> list[str]:
    if repo_dir is None or not repo_dir.is_dir():
        return []
    out = []
    for e in evidence:
        text = _repo_text(repo_dir, str(e["path"]))
        if text is None:
            out.append(f"evidence file {e['path']!r} is not in the repository")
            continue
        sym = str(e.get("symbol") or "").split(".")[-1].rstrip("()")
        if sym and sym not in text:
            out.append(f"symbol {e.get('symbol')!r} does not occur in {e['path']!r}")
    return out


def generation_messages(task: Task, traj: Trajectory, repo: Path | None, max_questions: int) -> list[dict[str, str]]:
    """The exact request of the ``qa.generate`` stage (tools that pre-record replies use it)."""
    tpl, _ = load_prompt("qa_generate")
    cmds = "\n".join(f"$ {c[:300]}" for c in traj.commands[:MAX_COMMANDS])
    prompt = render(tpl, max_questions=str(max_questions), issue=task.original_prompt or traj.issue,
                    commands=cmds, files=_files_context(traj, repo))
    return [{"role": "user", "content": prompt}]


def review_messages(question: str, answer: str, evidence: list[dict]) -> list[dict[str, str]]:
    """The exact request of the ``qa.review`` stage for one question."""
    tpl, _ = load_prompt("qa_review")
    prompt = render(tpl, question=question, answer=answer,
                    evidence=json.dumps(evidence, indent=1, ensure_ascii=False))
    return [{"role": "user", "content": prompt}]


#: Kinds of the one rejected record that stands for a task no question was mined for (``<id>::<kind>``):
#: no trajectory, a run that did not solve the task, no recorded reply in a replay store.
SKIP_KINDS = ("no-trajectory", "trajectory-unreadable", "trajectory-not-solving", "no-recorded-reply")


def skip_kind(item: QAItem) -> str | None:
    """The skip kind of such a record (no question text, id ``<instance_id>::<kind>``); None for a real item."""
    kind = item.question_id.rsplit("::", 1)[-1]
    return kind if not item.question and kind in SKIP_KINDS and item.status == "rejected" else None


def skipped_task(instance_id: str, kind: str, reason: str) -> QAItem:
    """The one rejected record that stands for a task no question was mined for (nothing is dropped silently)."""
    return QAItem(question_id=f"{instance_id}::{kind}", instance_id=instance_id, question="", reference_answer="",
                  status="rejected", reason=f"{kind}: {reason}")


def generate_questions(task: Task, trajectory_path: str | Path, repo_dir: str | Path | None, llm, *,
                       max_questions: int = 3, resolved: bool | None = None) -> list[QAItem]:
    """Propose, check and review up to ``max_questions`` questions for ``task``.

    Only a solving run is mined (:func:`solving_problem`; ``resolved`` is the
    task's flag from a results file, if any): otherwise one ``trajectory-not-solving`` record, no LLM call."""
    if not 1 <= max_questions <= 3:
        raise ConfigError("max_questions must be 1-3 (Appendix E)", field="max_questions", actual=max_questions)
    try:
        traj = read_trajectory(trajectory_path)
    except InputError as exc:   # a link, a FIFO, a bomb, bad JSON: one rejected record, nothing read or sent
        return [skipped_task(task.instance_id, "trajectory-unreadable", str(exc))]
    why = solving_problem(traj, resolved)
    if why:
        return [skipped_task(task.instance_id, "trajectory-not-solving", why)]
    try:    # the leakage reference is read first: an unreadable one rejects the task before any LLM call
        facts = patch_facts(task.patch or traj.submission, where=f"{task.instance_id}: gold patch" if task.patch
                            else f"{traj.path}: info.submission")
    except InputError as exc:
        return [skipped_task(task.instance_id, "reference-patch-unreadable", str(exc))]
    repo = Path(repo_dir) if repo_dir is not None else None
    _, gen_sha = load_prompt("qa_generate")
    _, rev_sha = load_prompt("qa_review")
    repo_checked = repo is not None and repo.is_dir()
    generator = {**llm.info, "prompt_sha256": gen_sha, "trajectory": Path(traj.path).name,
                 "trajectory_format": traj.trajectory_format, "trajectory_exit_status": traj.exit_status,
                 "trajectory_resolved": resolved, "repo_checked": repo_checked}
    reply = llm.complete(generation_messages(task, traj, repo, max_questions), stage=STAGE_GENERATE)
    generator["response_key"] = reply.key
    obj, why = parse_json_object(reply.text)
    qs = obj.get("questions") if obj is not None else None
    if obj is None or not isinstance(qs, list) or not qs:
        why = why or "field 'questions' missing, empty or not a list"
        return [QAItem(question_id=f"{task.instance_id}::generation-failed", instance_id=task.instance_id,
                       question="", reference_answer="", generator=generator, status="rejected",
                       reason=f"malformed-response: {STAGE_GENERATE}: {why}")]
    generator["leakage_reference"] = "gold patch" if task.patch else "trajectory submission"
    return [_checked_item(task, i, q, max_questions=max_questions, facts=facts, repo=repo, llm=llm,
                          rev_sha=rev_sha, generator=generator) for i, q in enumerate(qs, start=1)]


def _checked_item(task: Task, i: int, q: Any, *, max_questions: int, facts, repo: Path | None, llm, rev_sha: str,
                  generator: dict[str, Any]) -> QAItem:
    """The ``i``-th proposed question as a record: rejected when malformed, leaking or refused by the
    reviewer, else a candidate (the reviewer is asked only about a question that passed the checks)."""
    q = q if isinstance(q, dict) else {}
    question, answer = q.get("question"), q.get("reference_answer")
    evidence, proof = q.get("evidence"), q.get("proof_script")
    problems = _shape_problems(question, answer, evidence, proof)
    question = question if isinstance(question, str) else ""
    answer = answer if isinstance(answer, str) else ""
    evidence = evidence if _evidence_ok(evidence) else []
    qid = _qid(task.instance_id, i, question)
    if i > max_questions:
        problems.append(f"over the limit of {max_questions} questions")
    if problems:
        return QAItem(qid, task.instance_id, question, answer, tuple(evidence), proof if isinstance(
            proof, str) else "", generator=generator, status="rejected",
            reason="malformed-response: " + "; ".join(problems))
    problems = [f"leak (question): {x}" for x in leaks(question, facts)]
    problems += [f"leak (answer): {x}" for x in leaks(answer, facts)]
    problems += evidence_problems(evidence, facts) + _repo_problems(evidence, repo)
    reviewer: dict[str, Any] = {}
    if not problems:
        reviewer, verdict_problem = _review(llm, rev_sha, question, answer, evidence)
        problems += verdict_problem
    return QAItem(qid, task.instance_id, question, answer, tuple(evidence), proof, generator=generator,
                  reviewer=reviewer, status="rejected" if problems else "candidate", reason="; ".join(problems))


def _shape_problems(question: Any, answer: Any, evidence: Any, proof: Any) -> list[str]:
    """What is missing or mistyped in one proposed question."""
    problems = []
    if not isinstance(question, str) or not question.strip():
        problems.append("field 'question' missing or empty")
    if not isinstance(answer, str) or not answer.strip():
        problems.append("field 'reference_answer' missing or empty")
    if not _evidence_ok(evidence):
        problems.append("field 'evidence' must be a non-empty list of {path, symbol, note}")
    if not isinstance(proof, str) or not proof.strip():
        problems.append("field 'proof_script' missing or empty")
    return problems


def _review(llm, sha: str, question: str, answer: str, evidence: list[dict]) -> tuple[dict, list[str]]:
    reply = llm.complete(review_messages(question, answer, evidence), stage=STAGE_REVIEW)
    info = {**llm.info, "prompt_sha256": sha, "response_key": reply.key}
    obj, why = parse_json_object(reply.text)
    if obj is None:
        return info, [f"malformed-response: {STAGE_REVIEW}: {why}"]
    verdict = obj.get("verdict")
    if verdict not in ("accept", "reject"):
        return info, [f"malformed-response: {STAGE_REVIEW}: field 'verdict' must be accept or reject, got {verdict!r}"]
    info.update(verdict=verdict, clarity=obj.get("clarity"), repository_support=obj.get("repository_support"),
                review_reason=str(obj.get("reason") or ""))
    return info, ([] if verdict == "accept" else [f"reviewer rejected: {obj.get('reason') or 'no reason given'}"])
