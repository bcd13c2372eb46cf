"""``verify --reprove``: re-run every answer turn's proof and reproduce every reference.

For each distinct question item of a release: its proof script runs again in a sandbox (through an
injected ``run_proof``: the CLI passes ``builder.proofs.ProofRunner``; the core never imports the
builder) and must end with the published status and print the published evidence (stdout sha256).
A ``run_proof`` with a ``run_many(calls)`` method (``calls``: ``(repo, script, kwargs)`` tuples, results
in the same order) gets every re-run at once, before any is compared: a runner can then group them by
task (one Harbor environment per task instead of one per proof); the findings are the same, in the same order.
For augmentation kinds the reference is then re-derived from the re-run's output
(:func:`swe_taskflow.augment.reference.reproduce`) and, when the source tasks are given (gold patches
are not in a release), checked against the gold patch: the locations are code it changes, a planning
reference is what the requirement points at, a review's diff is the catalogue mutation it records
(:mod:`swe_taskflow.augment.recheck`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import ConfigError, VerifyError
from .safepath import inside, is_inside

#: Limits a re-run gets when the published report records none (the proofs' defaults).
DEFAULT_TIMEOUT_S = 60


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


def reprove(session_rows: Mapping[str, list], report, *, repos_dir, run_proof: Callable[..., Any] | None,
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
    ran: dict[str, Any] = {}
    run_many = getattr(run_proof, "run_many", None)
    if callable(run_many):   # every re-run at once: a runner that keeps one environment per task batches them
        todo = [(q, repo) for _, _, _, q, repo in items if repo is not None and q["proof_script"]]
        results = run_many([(repo, q["proof_script"], _rerun_kwargs(q, augmented=(q.get("kind") or "qa") != "qa"))
                            for q, repo in todo])
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
            result = _rerun(q, repo, run_proof, report, where, augmented=kind != "qa", ran=ran)
        if kind != "qa":
            from .augment.recheck import recheck
            task = (tasks or {}).get(r["instance_id"])
            text = next((t["text"] for t in r["turns"] if t.get("question_id") == q["question_id"]), "")
            for msg, fld in recheck(q, text, result=result, task=task, repo=repo):
                report.errors.append(VerifyError(msg, kind="mismatch", field=f"questions[{q['question_id']}].{fld}",
                                                 **where))
            report.rechecked += 1


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


def _rerun_kwargs(q, *, augmented: bool) -> dict[str, Any]:
    """How a proof is re-run: the image, sandbox and (for augmentation items) limits its report records."""
    pr = q["proof_report"] or {}
    kwargs: dict[str, Any] = {"image": pr.get("image") or None, "sandbox": pr.get("sandbox") or "auto",
                              "timeout_s": DEFAULT_TIMEOUT_S}
    limits = _limits(pr) if augmented else {}
    if limits:
        kwargs["timeout_s"] = limits.get("timeout_s") or DEFAULT_TIMEOUT_S
        kwargs["limits"] = limits
    return kwargs


def _rerun(q, repo, run_proof, report, where, *, augmented: bool, ran: Mapping[str, Any]):
    pr = q["proof_report"] or {}
    if q["question_id"] in ran:   # re-run already, in a batch (``run_proof.run_many``)
        result = ran[q["question_id"]]
    else:
        result = run_proof(repo, q["proof_script"], **_rerun_kwargs(q, augmented=augmented))
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


__all__ = ["reprove", "find_repo", "DEFAULT_TIMEOUT_S"]
