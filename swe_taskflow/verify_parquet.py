"""Parquet I/O of ``verify``: a split's shards, each schema checked against the declared features first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import TaskflowError, VerifyError
from .features import features_sha256, schema_differences
from .verify_checks import features_for
from .verify_report import VerifyReport


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
            pf = pq.ParquetFile(p)
            diffs = schema_differences(feats, pf.schema_arrow)
            if diffs:
                report.errors.append(VerifyError("parquet schema differs from the declared features: "
                                                 + "; ".join(diffs), kind="mismatch", path=f.path))
                return None
            rows.extend(pf.read().to_pylist())
        except TaskflowError:
            raise
        except Exception as exc:  # a corrupted shard: pyarrow raises many kinds
            report.errors.append(VerifyError(f"parquet shard cannot be read ({type(exc).__name__}: {exc})",
                                             kind="mismatch", path=f.path))
            return None
    return rows


__all__ = ["read_split"]
