"""The bubblewrap command line bounds every writable folder (issue 25), checked without running bwrap.

The real runs are in tests/container/test_proofs_sandbox.py (``test_the_whole_writable_filesystem_...``);
these keep the shape visible on machines without bubblewrap.
"""

from __future__ import annotations

import pytest

from builder.proofs import ProofConfig
from builder.proofs import bwrap_runner
from swe_taskflow.errors import SandboxError


def _box(monkeypatch, tmpfs_mb: int = 8) -> list[str]:
    monkeypatch.setattr(bwrap_runner, "bwrap_available", lambda: True)
    monkeypatch.setattr(bwrap_runner.os, "geteuid", lambda: 1000)
    argv = bwrap_runner.bwrap_command("/r", "/s", ["/bin/sh", "/proof/script"], ProofConfig(tmpfs_mb=tmpfs_mb))
    return argv[argv.index("bwrap"):argv.index("--", argv.index("bwrap"))]


def test_every_tmpfs_is_sized_and_the_root_and_dev_are_read_only(monkeypatch):
    box = _box(monkeypatch, tmpfs_mb=8)
    tmpfs = [box[i + 1] for i, a in enumerate(box) if a == "--tmpfs"]
    assert sorted(tmpfs) == ["/dev/shm", "/tmp"]
    for i, a in enumerate(box):
        if a == "--tmpfs":
            assert box[i - 2:i] == ["--size", str(8 << 20)], box[i + 1]
    ro = [box[i + 1] for i, a in enumerate(box) if a == "--remount-ro"]
    assert ro == ["/dev", "/"]
    last_mount = max(i for i, a in enumerate(box) if a in ("--tmpfs", "--ro-bind", "--bind", "--dev", "--proc"))
    assert box.index("--remount-ro") > last_mount   # remounted after every mount under it exists


def test_a_bubblewrap_without_size_is_refused_not_run_unbounded(monkeypatch, tmp_path):
    monkeypatch.setattr(bwrap_runner, "bwrap_bounds_tmpfs", lambda: False)
    with pytest.raises(SandboxError, match="cannot bound a tmpfs"):
        bwrap_runner.run_in_bwrap(tmp_path, "echo hi\n", config=ProofConfig())
