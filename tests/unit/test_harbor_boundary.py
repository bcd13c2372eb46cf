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


def _project_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] in ("swe_taskflow", "builder")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in ("swe_taskflow", "builder"):   # ``from pkg import sub``: the submodule
                out |= {f"{node.module}.{a.name}" if node.module in ("builder", "swe_taskflow") else node.module
                        for a in node.names}
    return out


def test_the_plugins_import_of_the_project_only_the_stdlib_owner_labels():
    # they run in Harbor's venv, where the project is installed without its dependencies: the one module
    # they share is swe_taskflow.hygiene (the owner label format the project's sweep reads), which needs only
    # the standard library
    import sys
    for f in sorted((ROOT / "swe_taskflow_harbor").glob("*.py")):
        assert _project_modules(f) <= {"swe_taskflow.hygiene"}, f
    assert _imports(ROOT / "builder" / "__init__.py") <= {"__future__"}   # importing the package runs nothing heavy
    hygiene = ROOT / "swe_taskflow" / "hygiene.py"
    # hygiene takes the owner tag from swe_taskflow.owned (the core makes owned folders too): standard library
    # only, like the package's __init__ it loads first; the plugins never import the builder
    assert _imports(hygiene) - {"__future__"} <= set(sys.stdlib_module_names), _imports(hygiene)
    relative = {n.module for n in ast.walk(ast.parse(hygiene.read_text(encoding="utf-8"))) if isinstance(n, ast.ImportFrom)
                and n.level}
    assert relative == {"owned"}, relative
    for shared in (ROOT / "swe_taskflow" / "owned.py", ROOT / "swe_taskflow" / "__init__.py"):
        assert _imports(shared) - {"__future__"} <= set(sys.stdlib_module_names), shared
    assert "swe_taskflow.hygiene" in set().union(*(_project_modules(f) for f in (ROOT / "swe_taskflow_harbor").glob("*.py")))
    assert {"harbor", "minisweagent"} <= set().union(*(_imports(f) for f in (ROOT / "swe_taskflow_harbor").glob("*.py")))
