"""tools.code_stats: the import circles and the core's imports running back up, on hand-written module trees."""

from __future__ import annotations

from builder.pipeline.code_closure import CodeBase
from tools.code_stats import back_up_imports, circles


def _tree(root, files: dict[str, str]):
    for rel, text in {"swe_taskflow/__init__.py": "", "builder/__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return CodeBase(root)


def test_an_import_from_a_core_folder_to_a_module_that_imports_the_folder_runs_back_up(tmp_path):
    """[hand-written] the shape issue 33 removed: augment/recheck.py -> stress.py -> augment/kinds.py."""
    before = _tree(tmp_path / "a", {"swe_taskflow/augment/__init__.py": "", "swe_taskflow/augment/kinds.py": "",
                                    "swe_taskflow/augment/recheck.py": "from .. import stress\n",
                                    "swe_taskflow/stress.py": "from .augment import kinds\n"})
    assert back_up_imports(before) == [("swe_taskflow.augment.recheck", "swe_taskflow.stress")]
    assert circles({m: before.imports_of(m) for m in before.modules()}) == []    # no module circle, a folder one
    after = _tree(tmp_path / "b", {"swe_taskflow/turns/__init__.py": "", "swe_taskflow/turns/kinds.py": "",
                                   "swe_taskflow/turns/recheck.py": "from . import stress\n",
                                   "swe_taskflow/turns/stress.py": "from . import kinds\n",
                                   "swe_taskflow/verify.py": "from .turns import recheck\n"})
    assert back_up_imports(after) == []


def test_circles_are_strongly_connected_components():
    assert circles({"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"d"}}) == [["a", "b"]]
