"""The package never imports Harbor or mini-swe-agent: only swe_taskflow_harbor (run in Harbor's venv) does."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = ("harbor", "minisweagent", "litellm")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_core_and_builder_never_import_harbor():
    files = [*sorted((ROOT / "swe_taskflow").rglob("*.py")), *sorted((ROOT / "builder").rglob("*.py"))]
    offenders = {str(f.relative_to(ROOT)): sorted(_imports(f) & set(FOREIGN)) for f in files
                 if "/data/" not in f.as_posix()}
    assert {f: m for f, m in offenders.items() if m} == {}
    assert len(files) > 50


def test_the_plugins_import_nothing_of_the_project():
    # they run in Harbor's venv, where the project is installed without its dependencies
    for f in sorted((ROOT / "swe_taskflow_harbor").glob("*.py")):
        assert not _imports(f) & {"swe_taskflow", "builder"}, f
    assert {"harbor", "minisweagent"} <= set().union(*(_imports(f) for f in (ROOT / "swe_taskflow_harbor").glob("*.py")))
