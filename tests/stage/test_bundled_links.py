"""Issue 25: a bundled repository (``[repos] bundled``) keeps its links as git does and refuses any leaving it.

``shutil.copytree`` followed links: a link to ``/etc/shadow`` became a regular file holding the host's
file in the build cache's repository. Hostile folders are made in tmp here (a link to /etc/passwd, a
``../`` escape, a chain of links, a folder link, a fifo); each must be one ConfigError naming the
link, with nothing copied, while links that stay inside are committed as links (mode 120000).
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from builder.bundled.repo import commit_folder
from builder.pipeline.folder_hash import tree_hash
from builder.pipeline.repos import materialize
from swe_taskflow.errors import ConfigError

SECRET = "HOST-SECRET-7d2e"


@pytest.fixture()
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """``src`` (a small repository folder) and ``outside`` (a sibling holding a secret)."""
    src, outside = tmp_path / "src", tmp_path / "outside"
    (src / "sub").mkdir(parents=True)
    outside.mkdir()
    (src / "mod.py").write_text("def answer():\n    return 41\n")
    (src / "sub" / "util.py").write_text("X = 1\n")
    (outside / "secret.txt").write_text(SECRET + "\n")
    return src, outside


def ls_tree(repo: Path) -> dict[str, tuple[str, str]]:
    """``{path: (mode, blob text)}`` of HEAD, read with git itself."""
    out = subprocess.run(["git", "-c", "safe.directory=*", "ls-tree", "-r", "HEAD"], cwd=repo, check=True,
                         capture_output=True, text=True).stdout
    tree = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        mode, _, sha = meta.split()
        blob = subprocess.run(["git", "-c", "safe.directory=*", "cat-file", "-p", sha], cwd=repo, check=True,
                              capture_output=True, text=True).stdout
        tree[path] = (mode, blob)
    return tree


def refused(src: Path, dest: Path) -> str:
    with pytest.raises(ConfigError) as err:
        commit_folder(src, dest)
    assert not dest.exists(), "nothing may be copied from a refused folder"
    return str(err.value)


def test_a_link_to_a_host_file_is_refused_naming_it(folders, tmp_path):
    src, _ = folders
    (src / "shadow").symlink_to("/etc/passwd")
    text = refused(src, tmp_path / "dest")
    assert text.startswith(f"{src / 'shadow'}: ") and "shadow -> /etc/passwd (absolute)" in text
    assert "root:" not in text


def test_a_dotdot_escape_is_refused(folders, tmp_path):
    src, _ = folders
    (src / "sub" / "esc").symlink_to("../../outside/secret.txt")
    text = refused(src, tmp_path / "dest")
    assert "sub/esc -> ../../outside/secret.txt (leaves the folder)" in text and SECRET not in text


def test_a_chain_of_links_out_is_refused_at_every_link(folders, tmp_path):
    """a -> b -> sub/c -> outside: each link is named (a and b only resolve outside through the chain)."""
    src, _ = folders
    (src / "a").symlink_to("b")
    (src / "b").symlink_to("sub/c")
    (src / "sub" / "c").symlink_to("../../outside/secret.txt")
    text = refused(src, tmp_path / "dest")
    assert "3 entries" in text
    assert "a -> b (resolves to" in text and "b -> sub/c (resolves to" in text
    assert "sub/c -> ../../outside/secret.txt" in text


def test_folder_links_out_and_leave_and_reenter_are_refused(folders, tmp_path):
    src, _ = folders
    (src / "etc").symlink_to("/etc")
    (src / "up").symlink_to("..")
    (src / "again").symlink_to("../src/mod.py")   # inside here only because the folder is named src
    text = refused(src, tmp_path / "dest")
    assert "etc -> /etc (absolute)" in text and "up -> .. (leaves the folder)" in text
    assert "again -> ../src/mod.py (leaves the folder)" in text


def test_a_fifo_is_refused_not_read(folders, tmp_path):
    src, _ = folders
    os.mkfifo(src / "pipe")   # reading it would block for ever
    assert "pipe (not a file, folder or link" in refused(src, tmp_path / "dest")


def test_links_inside_are_committed_as_links(folders, tmp_path):
    src, _ = folders
    (src / "alias.py").symlink_to("mod.py")
    (src / "pkg").symlink_to("sub")
    (src / "sub" / "back.py").symlink_to("../mod.py")
    (src / "dangling").symlink_to("sub/not-there")   # git keeps a dangling link too
    commit = commit_folder(src, tmp_path / "a")
    assert commit == commit_folder(src, tmp_path / "b")   # reproducible, links included
    tree = ls_tree(tmp_path / "a")
    assert tree["alias.py"] == ("120000", "mod.py") and tree["pkg"] == ("120000", "sub")
    assert tree["sub/back.py"] == ("120000", "../mod.py") and tree["dangling"] == ("120000", "sub/not-there")
    assert tree["mod.py"][0] == "100644"
    assert os.readlink(tmp_path / "a" / "alias.py") == "mod.py"


def test_the_build_cache_hash_never_reads_through_a_link(tmp_path):
    """The stage key (tree_hash) of a folder with links: a dangling link hashes, a retargeted one changes it."""
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "one").write_text("same\n")
    (tmp_path / "two").write_text("same\n")
    (src / "link").symlink_to("../one")
    first = tree_hash(src)
    (src / "link").unlink()
    (src / "link").symlink_to("../two")   # same bytes behind it, another link
    assert tree_hash(src) != first
    (src / "link").unlink()
    (src / "link").symlink_to("gone")
    assert tree_hash(src) != first   # and no FileNotFoundError


def _recipe(src: Path, tmp_path: Path) -> SimpleNamespace:
    return SimpleNamespace(repos=SimpleNamespace(path="", bundled=str(src), bundled_repo="acme/demo"),
                           resolve=lambda rel: Path(rel), path=tmp_path / "recipe.toml")


def test_materialize_refuses_a_hostile_bundled_folder_and_copies_nothing(folders, tmp_path):
    src, _ = folders
    (src / "shadow").symlink_to("/etc/passwd")
    (src / "esc").symlink_to("../outside/secret.txt")
    work = tmp_path / "work"
    with pytest.raises(ConfigError, match="2 entries git would not keep"):
        materialize(_recipe(src, tmp_path), work, [])
    left = [p for p in work.rglob("*") if p.is_file()] if work.exists() else []
    assert not any(SECRET in p.read_text(errors="replace") or "root:x:0:0" in p.read_text(errors="replace")
                   for p in left)


def test_materialize_keeps_inside_links_in_the_cache_repository(folders, tmp_path):
    src, _ = folders
    (src / "alias.py").symlink_to("mod.py")
    root, info = materialize(_recipe(src, tmp_path), tmp_path / "work", [])
    repo = root / "acme__demo"
    assert (repo / "alias.py").is_symlink() and os.readlink(repo / "alias.py") == "mod.py"
    assert ls_tree(repo)["alias.py"] == ("120000", "mod.py") and info["commit"]


def test_a_task_image_holds_links_as_links(folders, tmp_path):
    """The bundled task image's /app (builder.bundled.image._add_tree): a link member, not the target's bytes."""
    from builder.bundled.image import _add_tree
    from builder.proofs.image import RootfsWriter

    src, _ = folders
    (src / "alias.py").symlink_to("mod.py")
    (src / "pkg").symlink_to("sub")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add_tree(RootfsWriter(tar), src, "/app")
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        members = {m.name.lstrip("./").lstrip("/"): m for m in tar.getmembers()}
    for name, target in (("app/alias.py", "mod.py"), ("app/pkg", "sub")):
        assert members[name].issym() and members[name].linkname == target, name
        assert members[name].uid == 1000
    assert members["app/mod.py"].isfile() and members["app/sub"].isdir()


def test_a_recipe_naming_a_hostile_bundled_folder_stops_before_any_stage(folders, tmp_path, capsys):
    """The build refuses at once (exit 2, one line naming the link), not after classifying for a minute."""
    from builder.cli import main as cli_main
    from builder.pipeline.recipe import load_recipe

    src, _ = folders
    (src / "shadow").symlink_to("/etc/shadow")
    root = Path(__file__).resolve().parents[2] / "builder"
    text = (root / "releases" / "example.toml").read_text().replace('"../data/example/', f'"{root}/data/example/')
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(text.replace(f'bundled = "{root}/data/example/repo"', f'bundled = "{src}"'))
    with pytest.raises(ConfigError, match="shadow -> /etc/shadow"):
        load_recipe(recipe)
    assert cli_main(["build", str(recipe), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{src / 'shadow'}" in err and "shadow -> /etc/shadow (absolute)" in err
    assert not (tmp_path / "out" / "cache").exists() or not any((tmp_path / "out" / "cache").rglob("*.jsonl"))
