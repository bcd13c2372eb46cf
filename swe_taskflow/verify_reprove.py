"""``verify --reprove``: run every published proof script again and compare with its report.

The runner is injected (the CLI passes ``builder.proofs.run_proof``): the core never imports the builder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .errors import ConfigError, VerifyError
from .safepath import inside, is_inside


def find_repo(repos_dir: Path, row: Mapping[str, Any]) -> Path | None:
    """The checkout of a row's task: ``<instance_id>``, ``<owner>__<name>`` or ``<name>`` under ``repos_dir``.

    Names come from the (untrusted) release: one that leaves ``repos_dir`` is never used.
    """
    for name in (row["instance_id"], row["repo"].replace("/", "__"), row["repo"].split("/")[-1]):
        if name and is_inside(repos_dir, name) and (repos_dir / name).is_dir():
            return inside(repos_dir, name)
    return None


def reprove(session_rows, report, *, repos_dir, run_proof) -> None:
    """Re-run every question's proof once; a different status or evidence is a finding."""
    if repos_dir is None:
        report.errors.append(VerifyError("--reprove needs the source repositories", kind="missing",
                                         field="repos_dir", hint="pass --repos DIR (one checkout per instance id)"))
        return
    if run_proof is None:
        # The core never imports the builder: the CLI passes builder.proofs.run_proof.
        raise ConfigError("reprove needs a proof runner", field="run_proof",
                          hint="use `swe-taskflow verify --reprove`, or pass run_proof=builder.proofs.run_proof")
    repos_dir = Path(repos_dir)
    done: set[str] = set()
    for split, rows in session_rows.items():
        for n, r in enumerate(rows):
            for q in r["questions"] or []:
                if q["question_id"] in done:
                    continue
                done.add(q["question_id"])
                repo = find_repo(repos_dir, r)
                if repo is None:
                    report.errors.append(VerifyError("no checkout for this task's repository", kind="missing",
                                                     path=str(repos_dir), field=r["instance_id"]))
                    continue
                pr = q["proof_report"] or {}
                result = run_proof(repo, q["proof_script"], image=pr.get("image") or None,
                                   sandbox=pr.get("sandbox") or "auto", timeout_s=60)
                report.reproved += 1
                field = f"questions[{q['question_id']}].proof_report"
                if getattr(result, "status", None) != pr.get("status"):
                    report.errors.append(VerifyError("re-run proof ends differently from its published report",
                                                     kind="mismatch", path=split, row=n, field=f"{field}.status",
                                                     expected=pr.get("status"), actual=getattr(result, "status", None)))
                elif pr.get("stdout_sha256") and getattr(result, "stdout_sha256", None) != pr["stdout_sha256"]:
                    # Same verdict, other evidence: the checkout or the image differs from the build's.
                    report.errors.append(VerifyError("re-run proof prints other evidence than its published report",
                                                     kind="mismatch", path=split, row=n,
                                                     field=f"{field}.stdout_sha256", expected=pr["stdout_sha256"],
                                                     actual=getattr(result, "stdout_sha256", None),
                                                     hint="check that --repos holds the build's checkouts"))
