"""Architecture test (issue 32): every reader of untrusted input opens paths only through swe_taskflow.untrusted.

A release (verify, load), a job folder (``evaluate import``), a recipe's files, ``qa generate``'s trajectories:
the modules that read them may not call ``open``, ``os.open``, ``Path.open/read_text/read_bytes``,
``json.load``, ``tomllib.load``, ``gzip.*`` or parquet readers on a path themselves. A new direct read fails
here; a read that is safe for a stated reason goes in ALLOWED with that reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The modules that read untrusted paths.
READERS = (
    "swe_taskflow/verify.py", "swe_taskflow/verify_checks.py", "swe_taskflow/manifest.py", "swe_taskflow/release.py",
    "swe_taskflow/croissant.py", "swe_taskflow/untrusted.py",
    "builder/evaluation/jobfiles.py", "builder/evaluation/results.py", "builder/evaluation/importer.py",
    "builder/evaluation/view.py", "builder/pipeline/recipe.py", "builder/qa/generate.py",
    "builder/release/trajectories.py", "builder/evaluation/export.py",
)
#: Attribute calls that open or read a path (``x.read_text(...)``), whatever ``x`` is, unless ``x`` is
#: ``untrusted``.
READ_ATTRS = {"open", "read_text", "read_bytes", "load", "decompress", "GzipFile", "read_table", "ParquetFile",
              "fdopen", "copyfile", "copy", "copy2", "copytree"}
#: (module, call as written, why it is safe).
ALLOWED = {
    ("swe_taskflow/untrusted.py", "os.open", "the one place a path is opened (lstat, O_NOFOLLOW|O_NONBLOCK)"),
    ("swe_taskflow/untrusted.py", "os.fdopen", "wraps the descriptor it checked"),
    ("swe_taskflow/untrusted.py", "d.decompress", "a zlib stream decompressed with max_length (the gzip bound)"),
    ("swe_taskflow/release.py", "pq.read_table", "reads a file object from untrusted.open_file"),
    ("swe_taskflow/verify.py", "pq.ParquetFile", "reads a file object from untrusted.open_file"),
    ("builder/evaluation/export.py", "open", "writes a task file of the export (mode 'w'), reads nothing"),
    ("builder/evaluation/export.py", "resources.files(__package__).joinpath('data', name).read_text",
     "the package's own data"),
    ("builder/evaluation/export.py", "resources.files('swe_taskflow').joinpath(name).read_text",
     "the package's own data"),
}


def _calls(path: Path) -> list[tuple[str, int]]:
    """Every call in ``path`` that opens or reads a path by itself: (call as written, line)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            out.append(("open", node.lineno))
        elif isinstance(f, ast.Attribute) and f.attr in READ_ATTRS:
            base = ast.unparse(f.value)
            if base == "untrusted":
                continue
            if f.attr == "load" and base not in ("json", "tomllib", "pickle", "yaml"):
                continue
            if f.attr in ("copy",) and base != "shutil":
                continue   # dict.copy(), list.copy()
            out.append((f"{base}.{f.attr}", node.lineno))
    return out


@pytest.mark.parametrize("module", READERS)
def test_readers_open_paths_only_through_untrusted(module):
    allowed = {call for mod, call, _ in ALLOWED if mod == module}
    bad = [f"{module}:{line}: {call}(...)" for call, line in _calls(ROOT / module) if call not in allowed]
    assert not bad, ("a reader of untrusted input opens a path another way than swe_taskflow.untrusted "
                     "(route it through untrusted.read_bytes/read_json/open_file, or add it to ALLOWED with why):\n"
                     + "\n".join(bad))


def test_the_scan_sees_each_forbidden_form(tmp_path):
    """The scanner itself: each way of opening a path is found (a scan that finds nothing proves nothing)."""
    src = tmp_path / "m.py"
    src.write_text("import gzip, json, os\nfrom pathlib import Path\n"
                   "open('x')\nPath('x').read_text()\nPath('x').read_bytes()\ngzip.open('x')\n"
                   "json.load(open('x'))\nos.open('x', 0)\nPath('x').open()\nuntrusted.read_text('x')\n{}.copy()\n")
    found = [c for c, _ in _calls(src)]
    assert found.count("open") == 2
    assert {"Path('x').read_text", "Path('x').read_bytes", "gzip.open", "json.load", "os.open",
            "Path('x').open"} <= set(found)
    assert not any(c.startswith("untrusted") or c.endswith(".copy") for c in found)
