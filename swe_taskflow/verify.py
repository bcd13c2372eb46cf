"""Verify a release folder or a Hub revision against its manifest (for auditors).

Recomputes every row hash, split hash and file sha256; checks the README's declared configs,
data files, features and sizes against the files and the manifest; checks each parquet schema
against the declared features exactly; recomputes TFAS per split from the published target file
and the split's sessions (a ``stress_*`` slice has none and must carry none: swe_taskflow.turns.stress);
checks trajectories are bound to existing split and row hashes; and,
with ``reprove`` (only on a release with no error so far), re-runs every question's proof script through an
injected ``run_proof`` (the CLI passes ``builder.proofs.ProofRunner``: the auditor's sandbox and ceilings; the
core never imports the builder, and never passes a report's recorded sandbox) and reproduces every
augmentation turn's reference (see reprove_rows). Every finding is a :class:`VerifyError` with kind
missing | unexpected | mismatch, collected in a :class:`VerifyReport`. The pure checks on a release's
pieces live in swe_taskflow.verify_checks; this module reads the files (a folder, or a Hub revision
downloaded as real files) and calls them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import ConfigError, InputError, TaskflowError, VerifyError
from .features import features_sha256, schema_differences
from .hashing import ROW_HASH_FIELD, canonical_json, sha256_hex, split_sha256
from .manifest import (FLOAT_TOL, Manifest, check_manifest_integrity, compare_files, compare_mappings,
                       compare_row_hashes, load_manifest, values_equal)
from .progress import track
from . import untrusted
from .release import SESSION_CONFIG, TRAJ_HASH_FIELD, hash_listed, inventory, manifest_files
from .safepath import inside, is_inside
from .turns.stress import is_stress_split
from .verify_checks import (check_card, check_same_tasks, check_session_rows, check_trajectories, features_for,
                            read_front_matter, split_tfas)

HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass
class SplitSummary:
    config: str
    name: str
    rows: int
    sha256: str
    files: int
    bytes: int
    tfas: Mapping[str, float] | None = None
    stress: bool = False       # a stress-test slice: reported apart, never calibrated (no TFAS)


@dataclass
class VerifyReport:
    """What was checked, and every error found (empty = the release verifies)."""

    root: str
    manifest_path: str = ""
    release_id: str = ""
    splits: list[SplitSummary] = field(default_factory=list)
    errors: list[VerifyError] = field(default_factory=list)
    rows: int = 0
    bytes_hashed: int = 0      # file bytes hashed
    json_bytes: int = 0        # canonical JSON bytes of the rows hashed
    questions: int = 0
    reproved: int = 0
    rechecked: int = 0         # augmentation references re-derived (reprove)
    gold_checked: int | None = None   # items compared with their task's gold patch (None: no tasks were given)
    gold_failed: int = 0       # of those, items with a finding against the gold patch
    gold_no_task: int = 0      # items that would be compared, whose task (or its gold patch) was not given
    selection: Mapping[str, str] = field(default_factory=dict)   # split -> its candidate-selection configuration
    stress: Mapping[str, str] = field(default_factory=dict)      # stress split -> how its rows were chosen
    notes: list[str] = field(default_factory=list)   # what the auditor should know that is not an error

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_for_errors(self) -> None:
        """Raise the first error (the rest are in ``errors``)."""
        if self.errors:
            raise self.errors[0]

    def table(self) -> str:
        """A plain-text summary table (one line per split)."""
        head = f"{'config':<13} {'split':<28} {'rows':>6} {'files':>5} {'MB':>8} {'TFAS':>7} {'S_L':>6} {'S_T':>6} {'S_R':>6}  sha256"
        lines = [f"release {self.release_id}  ({self.manifest_path})", head, "-" * len(head)]
        core = [s for s in self.splits if not s.stress]
        stress = [s for s in self.splits if s.stress]
        for s in core:
            t = s.tfas or {}
            fmt = lambda k, w, p: f"{t[k]:>{w}.{p}f}" if k in t else f"{'-':>{w}}"  # noqa: E731
            lines.append(f"{s.config:<13} {s.name:<28} {s.rows:>6} {s.files:>5} {s.bytes / 1e6:>8.2f} "
                         f"{fmt('tfas', 7, 2)} {fmt('S_L', 6, 3)} {fmt('S_T', 6, 3)} {fmt('S_R', 6, 3)}  {s.sha256[:16]}")
            if s.tfas and s.name in self.selection:
                lines.append(f"{'':<13}   selection: {self.selection[s.name]}")
        if stress:   # apart from the calibrated core (paper Appendix C, step 7): hashes checked, no TFAS
            lines += ["stress-test slices (reported apart from the calibrated splits; never calibrated, no TFAS):"]
            for s in stress:
                lines.append(f"{s.config:<13} {s.name:<28} {s.rows:>6} {s.files:>5} {s.bytes / 1e6:>8.2f} "
                             f"{'stress':>7} {'-':>6} {'-':>6} {'-':>6}  {s.sha256[:16]}")
                if s.config == "default" and self.stress.get(s.name):
                    lines.append(f"{'':<13}   chosen: {self.stress[s.name]}")
        n_stress = sum(s.rows for s in stress)
        lines.append(f"{self.rows} rows" + (f" ({n_stress} in stress-test slices)" if stress else "")
                     + f", {self.bytes_hashed / 1e6:.2f} MB hashed, {self.questions} questions"
                     + (f", {self.reproved} proofs re-run" if self.reproved else "")
                     + (f", {self.rechecked} augmentation and stress references reproduced" if self.rechecked else "")
                     + ": all hashes hold")
        if self.gold_summary():
            lines.append(self.gold_summary())
        return "\n".join(lines)

    def gold_summary(self) -> str:
        """One line on the gold-patch checks of ``--reprove --tasks`` ("" when no tasks were given): how many
        ran, passed and failed, and how many items could not be checked for want of their source task."""
        if self.gold_checked is None:
            return ""
        from .words import counted

        n = self.gold_checked
        line = (f"{counted(n, 'gold-patch check')} ran ({n - self.gold_failed} passed, {self.gold_failed} failed): "
                f"augmentation and stress references compared with their source task's gold patch")
        if self.gold_no_task:
            line += f"; {counted(self.gold_no_task, 'item')} not compared (no task with a gold patch in --tasks)"
        return line


def download_release(hub_id: str, *, revision: str | None = None, local_dir: str | Path,
                     hub_timeout: float | None = None) -> Path:
    """Download a Hub dataset revision (every file) into ``local_dir`` and return the folder; every request has
    a deadline (``hub_timeout`` seconds, see :mod:`swe_taskflow.hub_net`)."""
    from huggingface_hub import snapshot_download

    from .hub_net import HubTimeoutError, hub_deadlines
    hub_deadlines(hub_timeout)
    try:
        path = snapshot_download(hub_id, repo_type="dataset", revision=revision, local_dir=str(local_dir))
    except HubTimeoutError as exc:
        raise HubTimeoutError(f"cannot download {hub_id}@{revision or 'main'}: {exc.message}", path=hub_id) from None
    except Exception as exc:  # network, auth, missing revision: one precise line
        raise VerifyError(f"cannot download {hub_id}@{revision or 'main'} ({type(exc).__name__})", kind="missing",
                          path=hub_id, hint="check the id and revision, and HF_HUB_OFFLINE") from None
    return Path(path)


def read_split(root: Path, entry, report: VerifyReport, regular) -> list[dict[str, Any]] | None:
    """Read a split's shards in order after checking each schema; None when a shard is unusable."""
    import pyarrow.parquet as pq

    feats = features_for(entry.config)
    where_split = f"{entry.config}/{entry.name}"
    if features_sha256(feats) != entry.schema_sha256:
        report.errors.append(VerifyError("schema hash in the manifest differs from this version's features",
                                         kind="mismatch", path=report.manifest_path,
                                         field=f"{where_split}.schema_sha256",
                                         expected=entry.schema_sha256, actual=features_sha256(feats)))
    rows: list[dict[str, Any]] = []
    for f in entry.files:
        p = root / f.path
        if f.path not in regular:
            return None   # missing or not a regular file: reported by the file inventory
        try:
            with untrusted.open_file(p, "parquet shard", root=root) as fh:   # bounded: LIMITS["parquet shard"]
                pf = pq.ParquetFile(fh)
                diffs = schema_differences(feats, pf.schema_arrow)
                if diffs:
                    report.errors.append(VerifyError("parquet schema differs from the declared features: "
                                                     + "; ".join(diffs), kind="mismatch", path=f.path))
                    return None
                rows.extend(pf.read().to_pylist())
        except InputError as exc:
            report.errors.append(VerifyError(exc.message, kind="mismatch", path=f.path, expected=exc.expected,
                                             actual=exc.actual))
            return None
        except TaskflowError:
            raise
        except Exception as exc:  # a corrupted shard: pyarrow raises many kinds
            report.errors.append(VerifyError(f"parquet shard cannot be read ({type(exc).__name__}: {exc})",
                                             kind="mismatch", path=f.path))
            return None
    return rows


def _find_manifest(root: Path, files: Mapping[str, Any], report: VerifyReport) -> Path | None:
    """The release's one manifest file; None (with the error reported) when there is none or several."""
    mdir = root / "manifests"
    found = [p for p in manifest_files(root) if p.relative_to(root).as_posix() in files]
    if not found:
        report.errors.append(VerifyError("no manifest in the release", kind="missing", path=str(mdir),
                                         hint="a release carries manifests/<name>-<version>.json"))
        return None
    for p in found[1:]:
        report.errors.append(VerifyError("more than one manifest in the release", kind="unexpected",
                                         path=p.relative_to(root).as_posix()))
    return found[0] if len(found) == 1 else None


def _load_manifest(mpath: Path, rel_m: str, report: VerifyReport) -> tuple[Manifest, bytes] | None:
    try:
        return load_manifest(mpath)
    except (VerifyError, InputError) as exc:
        report.errors.append(exc if isinstance(exc, VerifyError)
                             else VerifyError(exc.message, kind="mismatch", path=rel_m, field=exc.field,
                                              actual=exc.actual, hint=exc.hint))
        return None


def _check_readme(root: Path, files: Mapping[str, Any], manifest: Manifest, report: VerifyReport) -> None:
    if "README.md" not in files:
        return   # reported by the file inventory
    try:
        meta = read_front_matter(untrusted.read_text(root / "README.md", "README", root=root), where="README.md")
        report.errors += check_card(meta, manifest, where="README.md")
    except VerifyError as exc:
        report.errors.append(exc)
    except InputError as exc:
        report.errors.append(VerifyError(exc.message, kind="mismatch", path="README.md", row=exc.row))


def _load_target(root: Path, files: Mapping[str, Any], manifest: Manifest, report: VerifyReport):
    """The published target, or None when the release has none or it does not load (reported)."""
    if manifest.target is None or manifest.target.path not in files:
        return None
    from .target import target_from_dict
    path = root / manifest.target.path
    try:
        doc = untrusted.read_json(path, "target file", root=root)
        if not isinstance(doc, dict):
            raise InputError("a target file is a JSON object", path=str(path), actual=type(doc).__name__)
        return target_from_dict(doc, path=str(path))
    except InputError as exc:
        report.errors.append(VerifyError(f"target file does not load: {exc.message}", kind="mismatch",
                                         path=manifest.target.path, field=exc.field))
        return None


def _check_row_hashes(entry, rows: list[dict[str, Any]], where: str, report: VerifyReport) -> None:
    """Every row's stated hash against its recomputed canonical-JSON hash, the row count, the split hash."""
    hash_field = ROW_HASH_FIELD if entry.config == SESSION_CONFIG else TRAJ_HASH_FIELD
    stated = [r.get(hash_field) or "" for r in rows]
    recomputed = []
    for r in rows:
        data = canonical_json({k: v for k, v in r.items() if k != hash_field})
        report.json_bytes += len(data)
        recomputed.append(sha256_hex(data))
    if len(rows) != entry.rows:
        report.errors.append(VerifyError(f"split {entry.config}/{entry.name} has {len(rows)} rows, the manifest says "
                                         f"{entry.rows}", kind="missing" if len(rows) < entry.rows else "unexpected",
                                         path=where, field="rows", expected=entry.rows, actual=len(rows)))
    report.errors += compare_row_hashes(entry.sha256, stated, recomputed, where=where, split_sha=split_sha256(stated),
                                        field=hash_field)
    report.rows += len(rows)


def _check_tfas(entry, rows: list[dict[str, Any]], target, rel_m: str, report: VerifyReport):
    """A session split's TFAS recomputed from the target and its sessions, against the manifest's.

    A stress-test slice (``stress_*``) is never calibrated: its manifest entry must carry no TFAS, and
    none is computed (its hashes are checked like every split's)."""
    if is_stress_split(entry.name):
        if entry.tfas is not None:
            report.errors.append(VerifyError(f"the manifest gives a TFAS for the stress-test slice '{entry.name}'; "
                                             "stress slices are never calibrated and carry none", kind="unexpected",
                                             path=rel_m, field=f"{entry.name}.tfas", expected=None,
                                             actual=dict(entry.tfas)))
        return None
    if target is None or not rows:
        return None
    tfas = split_tfas(target, rows)
    if entry.tfas is None or not values_equal(dict(entry.tfas), tfas, tol=FLOAT_TOL):
        report.errors.append(VerifyError(f"TFAS of split '{entry.name}' recomputed from the target and "
                                         "its sessions differs from the manifest", kind="mismatch",
                                         path=rel_m, field=f"{entry.name}.tfas", expected=entry.tfas, actual=tfas))
    return tfas


def _stress_rules(manifest: Manifest) -> dict[str, str]:
    """Split -> how a stress slice's rows were chosen, from the manifest's ``stress`` provenance (verify's table)."""
    rec = (manifest.provenance or {}).get("stress")
    out: dict[str, str] = {}
    if not isinstance(rec, Mapping):
        return out
    for s in rec.get("slices") or ():
        if isinstance(s, Mapping) and isinstance(s.get("split"), str):
            chosen = s.get("chosen")
            drawn = f"{len(chosen)} task{'' if len(chosen) == 1 else 's'} drawn" if isinstance(chosen, (list, tuple)) else ""
            if drawn and s.get("eligible") is not None:
                drawn += f" of {s['eligible']} eligible"
            bits = [f"kind {s['kind']}" if s.get("kind") else "",
                    f"seed {s['seed']}" if s.get("seed") is not None else "", drawn]
            out[s["split"]] = ", ".join(b for b in bits if b)
    return out


# ---------------------------------------------------------------- verify --reprove
# For each distinct question item of a release: its proof script runs again in a sandbox (through an
# injected ``run_proof``: the CLI passes ``builder.proofs.ProofRunner``; the core never imports the
# builder) and must end with the published status and print the published evidence (stdout sha256).
# A ``run_proof`` with a ``run_many(calls)`` method (``calls``: ``(repo, script, kwargs)`` tuples, results
# in the same order) gets every re-run at once, before any is compared: a runner can then group them by
# task (one Harbor environment per task instead of one per proof); the findings are the same, in the same
# order. For augmentation kinds the reference is then re-derived from the re-run's output
# (:func:`swe_taskflow.turns.reference.reproduce`) and, when the source tasks are given (gold patches
# are not in a release), checked against the gold patch: the locations are code it changes, a planning
# reference is what the requirement points at, a review's diff is the catalogue mutation it records
# (:mod:`swe_taskflow.turns.registry`).

#: Limits a re-run gets when the published report records none (the proofs' defaults).
DEFAULT_TIMEOUT_S = 60
#: The limits a re-run gets where its report records none (``builder.proofs.ProofConfig()``; a test keeps them equal).
DEFAULT_LIMITS: Mapping[str, float] = {"timeout_s": 60.0, "mem_mb": 512, "pids": 64, "cpus": 1.0, "tmpfs_mb": 64,
                                       "max_output_bytes": 1 << 20, "excerpt_chars": 2000, "stderr_bytes": 4096,
                                       "fsize_mb": 64}
#: The auditor's ceilings when the runner names none (``builder.proofs.config.AUDITOR_CEILINGS``: the largest
#: limits the project's own builds give a proof; a test keeps them equal): a re-run never gets more than these,
#: whatever a report records.
DEFAULT_CEILINGS: Mapping[str, float] = {**DEFAULT_LIMITS, "timeout_s": 120.0, "mem_mb": 1024, "pids": 128,
                                         "tmpfs_mb": 256, "excerpt_chars": 4000}
#: Sandbox names a report may record that an auditor recognises. A recorded name is only compared with these,
#: never imported nor used: the re-run happens in the auditor's sandbox (``run_proof``'s own default or its
#: ``--sandbox``), whatever the release says.
KNOWN_SANDBOXES = ("docker", "bwrap", "harbor", "harbor:swe_taskflow_harbor.environment:DockerEnvironment")


def auditor_limits(recorded: Mapping[str, Any], ceilings: Mapping[str, float]) -> dict[str, float]:
    """Each limit of a re-run: the recorded value (the default where none is recorded, or the recorded one is
    not a positive finite number), never above the auditor's ceiling (a release may ask for less than the
    auditor's machine gives, never more)."""
    import math

    out: dict[str, float] = {}
    for key, ceiling in ceilings.items():
        value = recorded.get(key)
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                and value > 0):
            value = DEFAULT_LIMITS.get(key, ceiling)
        out[key] = type(ceiling)(min(value, ceiling))
    return out


def find_repo(repos_dir: Path, row: Mapping[str, Any]) -> Path | None:
    """The checkout of a row's task: ``<instance_id>``, ``<owner>__<name>`` or ``<name>`` under ``repos_dir``.

    Names come from the (untrusted) release: one that leaves ``repos_dir`` is never used.
    """
    for name in (row["instance_id"], row["repo"].replace("/", "__"), row["repo"].split("/")[-1]):
        if name and is_inside(repos_dir, name) and (repos_dir / name).is_dir():
            return inside(repos_dir, name)
    return None


def _limits(pr: Mapping[str, Any]) -> dict[str, Any]:
    import json
    if isinstance(pr.get("limits"), Mapping):
        return dict(pr["limits"])
    try:
        return dict(json.loads(pr.get("extra") or "{}").get("limits") or {})
    except (ValueError, AttributeError):
        return {}


def reprove_rows(session_rows: Mapping[str, list], report, *, repos_dir, run_proof: Callable[..., Any] | None,
            tasks: Mapping[str, Any] | None = None) -> None:
    """Re-run and re-derive every question item once (errors go to ``report.errors``)."""
    if repos_dir is None:
        report.errors.append(VerifyError("--reprove needs the source repositories", kind="missing",
                                         field="repos_dir", hint="pass --repos DIR (one checkout per instance id)"))
        return
    if run_proof is None:
        # The core never imports the builder: the CLI passes builder.proofs.ProofRunner.
        raise ConfigError("reprove needs a proof runner", field="run_proof",
                          hint="use `swe-taskflow verify --reprove`, or pass run_proof=builder.proofs.run_proof")
    repos_dir = Path(repos_dir)
    items = list(_items(session_rows, repos_dir))
    ceilings = dict(getattr(run_proof, "ceilings", None) or DEFAULT_CEILINGS)
    _note_unknown_sandboxes(items, report)
    ran: dict[str, Any] = {}
    gold = [0, 0, 0]   # gold-patch checks run, failed, not run for want of the task
    run_many = getattr(run_proof, "run_many", None)
    if callable(run_many):   # every re-run at once: a runner that keeps one environment per task batches them
        todo = [(q, repo) for _, _, _, q, repo in items if repo is not None and q["proof_script"]]
        results = run_many([(repo, q["proof_script"], _rerun_kwargs(q, ceilings)) for q, repo in todo])
        ran = {q["question_id"]: result for (q, _), result in zip(todo, results)}
    for split, n, r, q, repo in items:
        kind = q.get("kind") or "qa"
        if repo is None and q["proof_script"]:     # a text-only item (planning) needs no checkout
            report.errors.append(VerifyError("no checkout for this task's repository", kind="missing",
                                             path=str(repos_dir), field=r["instance_id"]))
            continue
        where = dict(path=split, row=n)
        result = None
        if q["proof_script"]:
            result = _rerun(q, repo, run_proof, report, where, ceilings, ran=ran)
        if kind != "qa":
            from .turns.registry import recheck, uses_gold_patch
            task = (tasks or {}).get(r["instance_id"])
            text = next((t["text"] for t in r["turns"] if t.get("question_id") == q["question_id"]), "")
            # the re-run's output first, then the gold patch (apart, so that the gold-patch checks are counted)
            found = recheck(q, text, result=result, task=None, repo=repo)
            if tasks is not None and uses_gold_patch(q):
                patch: str | None = getattr(task, "patch", None) if task is not None else None
                if patch:
                    against_gold = recheck(q, text, result=None, task=task, repo=repo)
                    gold[0] += 1
                    gold[1] += bool(against_gold)
                    found += against_gold
                else:
                    gold[2] += 1
            for msg, fld in found:
                report.errors.append(VerifyError(msg, kind="mismatch", field=f"questions[{q['question_id']}].{fld}",
                                                 **where))
            report.rechecked += 1
    if tasks is not None:
        report.gold_checked, report.gold_failed, report.gold_no_task = gold


def _items(session_rows: Mapping[str, list], repos_dir: Path):
    """(split, row number, row, question, checkout or None) of every distinct question item, in release order."""
    done: set[str] = set()
    for split, rows in session_rows.items():
        for n, r in enumerate(rows):
            for q in r["questions"] or []:
                if q["question_id"] in done:
                    continue
                done.add(q["question_id"])
                yield split, n, r, q, find_repo(repos_dir, r)


def _note_unknown_sandboxes(items, report) -> None:
    """One line when reports record a sandbox outside :data:`KNOWN_SANDBOXES` (compared, never imported)."""
    recorded = [(q["proof_report"] or {}).get("sandbox") for *_, q, _ in items]
    names = sorted({n if isinstance(n, str) else f"<a {type(n).__name__}>" for n in recorded if n}
                   - set(KNOWN_SANDBOXES))
    if names:
        shown = ", ".join(repr(n[:80]) for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        report.notes.append(f"proof reports record sandbox {shown}, not one this auditor knows: nothing named there "
                            "is imported or used; every proof re-runs in the auditor's own sandbox")


def _rerun_kwargs(q, ceilings: Mapping[str, float]) -> dict[str, Any]:
    """How a proof is re-run: the image and limits its report records, the limits capped by the auditor's
    ceilings (:func:`auditor_limits`). Never the recorded sandbox: the runner's own is used."""
    pr = q["proof_report"] or {}
    image = pr.get("image")
    limits = auditor_limits(_limits(pr), ceilings)
    return {"image": image if isinstance(image, str) and image else None, "timeout_s": limits["timeout_s"],
            "limits": limits}


def _rerun(q, repo, run_proof, report, where, ceilings, *, ran: Mapping[str, Any]):
    pr = q["proof_report"] or {}
    if q["question_id"] in ran:   # re-run already, in a batch (``run_proof.run_many``)
        result = ran[q["question_id"]]
    else:
        result = run_proof(repo, q["proof_script"], **_rerun_kwargs(q, ceilings))
    report.reproved += 1
    field = f"questions[{q['question_id']}].proof_report"
    if getattr(result, "status", None) != pr.get("status"):
        report.errors.append(VerifyError("re-run proof ends differently from its published report", kind="mismatch",
                                         field=f"{field}.status", expected=pr.get("status"),
                                         actual=getattr(result, "status", None), **where))
        return None
    if pr.get("stdout_sha256") and getattr(result, "stdout_sha256", None) != pr["stdout_sha256"]:
        # Same verdict, other evidence: the checkout or the image differs from the build's.
        report.errors.append(VerifyError("re-run proof prints other evidence than its published report",
                                         kind="mismatch", field=f"{field}.stdout_sha256", expected=pr["stdout_sha256"],
                                         actual=getattr(result, "stdout_sha256", None),
                                         hint="check that --repos holds the build's checkouts", **where))
        return None
    return result



def verify_folder(root: str | Path, **kw: Any) -> VerifyReport:
    """Verify a release folder; see the module doc for what is checked (``tasks``: source tasks by
    instance id, to reprove references derived from gold patches; see :func:`reprove_rows`).

    Bad data is always a finding, never an exception: an error of the project naming a file becomes one, and
    so does any other failure while reading (named by its type), so a library caller gets a report."""
    try:
        return _verify_folder(root, **kw)
    except ConfigError:
        raise   # a caller's mistake (reprove without a runner), not the release's
    except TaskflowError as exc:
        report = VerifyReport(root=str(root))
        report.errors.append(exc if isinstance(exc, VerifyError) else
                             VerifyError(exc.message, kind="mismatch", path=exc.path, row=exc.row, field=exc.field,
                                         expected=exc.expected, actual=exc.actual, hint=exc.hint))
        return report
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError, OSError) as exc:
        report = VerifyReport(root=str(root))
        report.errors.append(VerifyError(f"the release holds data of an unexpected shape ({type(exc).__name__}: "
                                         f"{str(exc)[:200]})", kind="mismatch", path=str(root)))
        return report


def _verify_folder(root: str | Path, *, reprove: bool = False, repos_dir: str | Path | None = None,
                  run_proof: Callable[..., Any] | None = None, progress: bool = False,
                  tasks: Mapping[str, Any] | None = None) -> VerifyReport:
    root = Path(root)
    report = VerifyReport(root=str(root))
    if not root.is_dir():
        report.errors.append(VerifyError("release folder not found", kind="missing", path=str(root)))
        return report
    files, not_regular = inventory(root)    # first: nothing below opens a link, a FIFO or a device
    report.errors += not_regular
    mpath = _find_manifest(root, files, report)
    if mpath is None:
        return report
    rel_m = mpath.relative_to(root).as_posix()
    report.manifest_path = rel_m
    loaded = _load_manifest(mpath, rel_m, report)
    if loaded is None:
        return report
    manifest, raw = loaded
    report.release_id = manifest.release_id
    report.selection = dict((manifest.provenance or {}).get("selection") or {})
    report.stress = _stress_rules(manifest)
    report.errors += check_manifest_integrity(raw, where=rel_m)
    if rel_m != manifest.path_in_release:
        report.errors.append(VerifyError("manifest file name does not match its release", kind="mismatch",
                                         path=rel_m, expected=manifest.path_in_release, actual=rel_m))
    files.pop(rel_m, None)
    # decided by name and size before any hashing: only files listed at their very size are read
    hashed, too_large = hash_listed(root, manifest.all_files(), files)
    report.errors += too_large
    skip = {e.path for e in too_large}   # reported once, as too large
    report.errors += compare_files([f for f in manifest.all_files() if f.path not in skip],
                                   {k: v for k, v in hashed.items() if k not in skip}, where=rel_m)
    report.bytes_hashed = sum(f.size for f in hashed.values() if f.sha256) + len(raw)
    _check_readme(root, files, manifest, report)
    target = _load_target(root, files, manifest, report)
    from .croissant import check_croissant
    report.errors += check_croissant(root, manifest, target)

    session_rows: dict[str, list[dict[str, Any]]] = {}
    questions: dict[str, str] = {}
    entries = sorted(manifest.splits, key=lambda s: (s.config != SESSION_CONFIG, s.config, s.name))
    for entry in track(entries, desc="verify", unit="splits", enabled=progress):
        where = entry.files[0].path if entry.files else f"{entry.config}/{entry.name}"
        rows = read_split(root, entry, report, files)
        if rows is None:
            continue
        _check_row_hashes(entry, rows, where, report)
        tfas = None
        if entry.config == SESSION_CONFIG:
            session_rows[entry.name] = rows
            check_session_rows(rows, entry, where, report, questions)
            tfas = _check_tfas(entry, rows, target, rel_m, report)
        else:
            check_trajectories(rows, entry, where, manifest, session_rows, report)
        report.splits.append(SplitSummary(entry.config, entry.name, len(rows), entry.sha256, len(entry.files),
                                          sum(f.size for f in entry.files), tfas, stress=is_stress_split(entry.name)))
    report.errors += check_same_tasks(session_rows, manifest)
    report.errors += compare_mappings(dict(manifest.questions), questions, what="question proof report",
                                      where=rel_m)
    report.questions = len(questions)
    if reprove and report.errors:   # nothing of a release that does not verify is run
        report.notes.append(f"nothing re-proved: the release has {len(report.errors)} error(s) above")
    elif reprove:
        reprove_rows(session_rows, report, repos_dir=repos_dir, run_proof=run_proof, tasks=tasks)
    return report


def verify_release(path_or_hub_id: str | Path, *, revision: str | None = None, reprove: bool = False,
                   repos_dir: str | Path | None = None, run_proof: Callable[..., Any] | None = None,
                   progress: bool = False, tasks: Mapping[str, Any] | None = None,
                   hub_timeout: float | None = None) -> VerifyReport:
    """Verify a release folder, or a Hub dataset id at ``revision``; returns a report (``.ok``, ``.errors``).
    ``hub_timeout``: the deadline of every Hub request in seconds (:mod:`swe_taskflow.hub_net`)."""
    p = Path(path_or_hub_id)
    if p.exists():
        if revision is not None:
            raise InputError("--revision applies to a Hub id, not to a local folder", path=str(p), field="revision")
        return verify_folder(p, reprove=reprove, repos_dir=repos_dir, run_proof=run_proof, progress=progress,
                             tasks=tasks)
    if not HUB_ID_RE.match(str(path_or_hub_id)):
        raise VerifyError("neither a folder nor a Hub dataset id", kind="missing", path=str(path_or_hub_id))
    from .owned import owned_temp

    with owned_temp("swe-taskflow-verify-") as tmp:   # owned: a killed verify's download is swept
        # a local_dir holds real files; the Hub cache would give links into its blob store
        folder = download_release(str(path_or_hub_id), revision=revision, local_dir=tmp, hub_timeout=hub_timeout)
        report = verify_folder(folder, reprove=reprove, repos_dir=repos_dir, run_proof=run_proof,
                               progress=progress, tasks=tasks)
    report.root = f"{path_or_hub_id}@{revision or 'main'}"
    return report


__all__ = ["verify_release", "verify_folder", "VerifyReport", "SplitSummary", "download_release", "reprove_rows",
           "find_repo", "DEFAULT_TIMEOUT_S", "DEFAULT_CEILINGS", "DEFAULT_LIMITS", "KNOWN_SANDBOXES", "auditor_limits"]
