"""tools.compare_releases: two builds differ only where something other than the commit differs."""

from __future__ import annotations

import json
import shutil

from tools.compare_releases import differences, main

C1, C2 = "a" * 40, "b" * 40


def _release(root, commit, *, rows=3, data=b"PAR1", card="Rows: 3"):
    (root / "manifests").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "data" / "s-00000-of-00001.parquet").write_bytes(data)
    (root / "README.md").write_text(f"# x\n\n{card}\n\nBuilt by swe-taskflow at {commit}.\n", encoding="utf-8")
    manifest = {"name": "x", "package": {"git_commit": commit, "git_dirty": False, "version": "0.1.0"},
                "splits": [{"name": "s", "rows": rows}], "manifest_sha256": commit[:8], "readme": {"sha256": commit}}
    (root / "manifests" / "x-0.1.0.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def test_only_the_commit_differs(tmp_path):
    a = _release(tmp_path / "a", C1)
    b = _release(tmp_path / "b", C2)
    assert differences(a, b) == []
    assert main([str(a), str(b)]) == 0


def test_each_kind_of_difference_is_named(tmp_path):
    a = _release(tmp_path / "a", C1)
    assert differences(a, _release(tmp_path / "rows", C2, rows=4)) == ["manifest: splits"]
    assert differences(a, _release(tmp_path / "data", C2, data=b"PAR2")) == ["data/s-00000-of-00001.parquet"]
    assert differences(a, _release(tmp_path / "card", C2, card="Rows: 4")) == ["README.md (beyond its commit line)"]
    extra = _release(tmp_path / "extra", C1)
    shutil.copy(extra / "README.md", extra / "data" / "README.md")
    assert differences(a, extra) == ["data/README.md"]
    assert main([str(a), str(extra)]) == 1


def test_a_build_from_uncommitted_changes_differs_only_by_its_commit_line(tmp_path):
    """The card writes ``at commit `HASH` (uncommitted changes).``: the mark after the backtick is part of the
    commit line (a before/after check of a restructuring is built from a working tree with changes)."""
    a = _release(tmp_path / "a", C1, card="")
    b = _release(tmp_path / "b", C2, card="")
    for root, line in ((a, f"at commit `{C1}`."), (b, f"at commit `{C2}` (uncommitted changes).")):
        text = (root / "README.md").read_text(encoding="utf-8")
        (root / "README.md").write_text(text + f"Built with swe-taskflow 0.1.0 {line}\n", encoding="utf-8")
    assert differences(a, b) == []
    text = (b / "README.md").read_text(encoding="utf-8")
    (b / "README.md").write_text(text.replace(f"`{C2}`", f"{C2}"), encoding="utf-8")   # the backtick itself counts
    assert differences(a, b) == ["README.md (beyond its commit line)"]
