"""Stage ``verify``: the written release checked the way an auditor would (swe_taskflow.verify)."""

from __future__ import annotations

from dataclasses import dataclass

from swe_taskflow.errors import VerifyError
from swe_taskflow.verify import verify_release

from ..stage_data import VerifyOutputs as Outputs, VerifySummary as Summary, WriteOutputs


@dataclass(frozen=True)
class Inputs:
    write: WriteOutputs


def run(inputs: Inputs, ctx) -> Outputs:
    root = inputs.write.release
    report = verify_release(root)
    ctx.progress.set_total(len(report.splits))
    ctx.progress.advance(len(report.splits))
    errors = [str(e) for e in report.errors]
    if not report.ok:
        raise VerifyError(f"the release does not verify ({len(errors)} errors); first: {errors[0]}", path=str(root))
    return Outputs(
        report={"ok": report.ok, "release_id": report.release_id, "rows": report.rows, "questions": report.questions,
                "splits": [{"config": s.config, "name": s.name, "rows": s.rows, "sha256": s.sha256, "tfas": s.tfas}
                           for s in report.splits],
                "errors": errors},
        table=report.table().replace(str(root), "release") + "\n",
        summary=Summary(ok=True, rows=report.rows, splits=len(report.splits)))
