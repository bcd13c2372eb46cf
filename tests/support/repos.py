"""Small git repositories for sandbox and tree-hash tests, and an independent snapshot of a folder."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Mapping


def git(repo: Path, *args: str) -> str:
    """``git args`` in ``repo`` with a throw-away identity; its stdout as is."""
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def make_repo(root: Path, files: Mapping[str, str]) -> Path:
    """A new git repository at ``root`` holding ``files`` (relative path -> text), committed once."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def snapshot(path: Path) -> str:
    """Independent of the code under test: every path and byte under the folder, .git included."""
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        h.update(str(p.relative_to(path)).encode() + b"\0")
        if p.is_file() and not p.is_symlink():
            h.update(p.read_bytes())
    return h.hexdigest()
