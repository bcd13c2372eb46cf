"""The last mile of issue 36: what a newcomer meets at the command line."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from builder.cli import main
from builder.pipeline import extras
from builder.pipeline.recipe import load_recipe
from builder.pipeline.registry import pipeline_stages
from builder.resources import builder_path
from swe_taskflow.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = builder_path("releases", "example.toml")


def test_build_help_lists_every_stage_of_the_registry(capsys):
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    names = [s.name for s in pipeline_stages()]
    assert f"{len(names)} stages: {' -> '.join(names)}" in text


def test_a_light_install_fails_before_any_stage_naming_the_build_extra(monkeypatch, tmp_path):
    """The light install passed ``build --dry-run`` and then stopped at stage 2 on a missing sklearn."""
    real = importlib.util.find_spec
    monkeypatch.setattr(extras.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("sklearn", "matplotlib") else real(name, *a))
    with pytest.raises(ConfigError) as exc:
        extras.check_extras(load_recipe(EXAMPLE))
    assert "matplotlib, scikit-learn" in str(exc.value) and "pip install '.[build]'" in str(exc.value)
    assert main(["build", str(EXAMPLE), "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    assert not (tmp_path / "o" / "cache").exists()


def test_the_full_install_passes_the_extras_check():
    assert extras.missing(load_recipe(EXAMPLE)) == []


def test_a_closed_pipe_ends_quietly():
    """``swe-taskflow ... | head``: the reader has gone before the first line; no "error: Broken pipe" (``-u``:
    each write reaches the pipe at once, as a long output does)."""
    code = ("import sys; import swe_taskflow as st; from builder.cli import main; "
            "sys.exit(main(['flow', 'gap', '--target', 'default', '--benchmark', str(st.default_target_path())]))")
    p = subprocess.Popen([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    p.stdout.close()                                   # the reader leaves before anything is written
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141 and err == "", err


def test_verify_of_a_file_exits_2_like_a_missing_path(tmp_path, capsys):
    """``verify FILE`` failed verification (exit 1) where a missing path is a usage error (exit 2)."""
    f = tmp_path / "README.md"
    f.write_text("not a release\n")
    with pytest.raises(SystemExit) as exc:
        main(["verify", str(f)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "is a file, not a release folder" in err
    assert main(["verify", str(tmp_path / "missing")]) == 2
