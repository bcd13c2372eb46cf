"""Stage ``verify``: the written release checked the way an auditor would (swe_taskflow.verify)."""

from __future__ import annotations

from swe_taskflow.errors import VerifyError
from swe_taskflow.jsonl import write_json

from .common import need_module


def run(ctx) -> None:
    verify = need_module("swe_taskflow.verify", "issue 6, releases")
    root = ctx.input("write") / "release"
    report = verify.verify_release(root)
    ctx.progress.set_total(len(report.splits))
    ctx.progress.advance(len(report.splits))
    errors = [str(e) for e in report.errors]
    write_json(ctx.out / "verify.json", {
        "ok": report.ok, "release_id": report.release_id, "rows": report.rows, "questions": report.questions,
        "splits": [{"config": s.config, "name": s.name, "rows": s.rows, "sha256": s.sha256, "tfas": s.tfas}
                   for s in report.splits],
        "errors": errors})
    (ctx.out / "verify.txt").write_text(report.table().replace(str(root), "release") + "\n" if report.ok
                                        else "\n".join(errors) + "\n", encoding="utf-8")
    if not report.ok:
        raise VerifyError(f"the release does not verify ({len(errors)} errors); first: {errors[0]}", path=str(root))
    ctx.summary.update(ok=True, rows=report.rows, splits=len(report.splits))
