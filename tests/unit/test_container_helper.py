"""The resident command helper's pure parts, on the host: users resolved as libcontainer resolves them,
the environment dockerd gives an exec, replies decoded as plain data only, and the helper importing
nothing it would have to compile in a task image (those images ship no bytecode: 0.4 s per start)."""

from __future__ import annotations

import ast
import marshal
from pathlib import Path

import pytest

from swe_taskflow_harbor import command_channel, container_helper

PASSWD = """root:x:0:0:root:/root:/bin/sh
# a comment
agent:x:1000:1000:agent:/home/agent:/bin/bash
nohome:x:1001:1001:no home::/bin/sh
broken:x:abc:1:b:/:/bin/sh
"""
GROUP = """root:x:0:
audio:x:29:agent
video:x:44:root,agent
agent:x:1000:
other:x:50:agentx,someone
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    (tmp_path / "passwd").write_text(PASSWD)
    (tmp_path / "group").write_text(GROUP)
    monkeypatch.setattr(container_helper, "PASSWD", str(tmp_path / "passwd"))
    monkeypatch.setattr(container_helper, "GROUP", str(tmp_path / "group"))


def test_users_resolve_as_docker_exec_resolves_them(files):
    resolve = container_helper.resolve_user
    assert resolve("agent") == (1000, 1000, [29, 44, 1000], "/home/agent")   # primary + every listing group
    assert resolve("1000") == resolve("agent") and resolve(1000) == resolve("agent")
    assert resolve("root") == (0, 0, [0, 44], "/root")
    assert resolve("") == (0, 0, [0], "/root") == resolve(None)   # no user asked: uid 0, primary group only
    assert resolve("nohome") == (1001, 1001, [1001], "/")
    # left to docker exec: unknown users and uids, a group in the spec, a malformed line
    assert [resolve(u) for u in ("ghost", "4242", "agent:root", "1000:1000", "broken")] == [None] * 5


def test_the_exec_environment_is_dockerds():
    env = command_channel.exec_environment("h1", ["PATH=/usr/bin", "LANG=C.UTF-8", "X=1", "GONE=1", "GONE"],
                                           {"X": "2", "NEW": "v", "LANG": None})
    assert list(env.items()) == [("PATH", "/usr/bin"), ("HOSTNAME", "h1"), ("X", "2"), ("NEW", "v")]
    assert command_channel.exec_environment("h", [], None) == {"PATH": command_channel.DEFAULT_PATH,
                                                              "HOSTNAME": "h"}


def test_replies_are_plain_data_only():
    assert command_channel.loads(marshal.dumps({"code": 3}, 2)) == {"code": 3}
    with pytest.raises(ValueError, match="unexpected reply"):
        command_channel.loads(marshal.dumps(compile("1", "x", "eval")))   # never a code object


def test_the_helper_imports_only_what_the_interpreter_has_built_in_or_frozen():
    tree = ast.parse(Path(container_helper.__file__).read_text())
    imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"_signal", "errno", "marshal", "os", "select", "stat", "sys", "time"}
