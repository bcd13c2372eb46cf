"""The Hub edge of ``verify``: a dataset revision downloaded as real files into a folder."""

from __future__ import annotations

from pathlib import Path

from .errors import VerifyError


def download_release(hub_id: str, *, revision: str | None = None, local_dir: str | Path | None = None) -> Path:
    """Download a Hub dataset revision (every file) and return the folder."""
    from huggingface_hub import snapshot_download
    try:
        path = snapshot_download(hub_id, repo_type="dataset", revision=revision,
                                 local_dir=None if local_dir is None else str(local_dir))
    except Exception as exc:  # network, auth, missing revision: one precise line
        raise VerifyError(f"cannot download {hub_id}@{revision or 'main'} ({type(exc).__name__})", kind="missing",
                          path=hub_id, hint="check the id and revision, and HF_HUB_OFFLINE") from None
    return Path(path)


__all__ = ["download_release"]
