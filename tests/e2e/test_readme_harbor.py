"""The README's Harbor commands, as written, in a fresh clone (issue 25, "Must show").

A ``git clone`` of this checkout into a temporary folder (no ``../shared`` beside it), the existing
virtual environments linked in (the Makefile's stamps make ``make`` skip the set-up), then:
``make example``; the commands of the README's "Running a model on a release (Harbor)" section,
read from README.md (not copied, so the test follows the README): the first block (export of every
row of the condition: the SWE-Bench Pro tasks run the benchmark's own scripts, recorded by ``build``;
``harbor run -m openai/gpt-5-mini``; ``evaluate import --judge openai``) with ``OPENAI_BASE_URL``
pointing the model and the judge at a loopback endpoint that replays hand-written replies (the 16
SWE-Bench Pro trials end in an error: their images are not on this machine); the whole offline block
(export, ``harbor run`` by name from the export's local registry with the oracle, ``harbor run`` with
the project's agent on mini-swe-agent's deterministic model, ``evaluate import``, ``verify``); then
``make example`` again, which keeps the imported trajectories (their rows are unchanged), and
``verify`` passes. Every command exits 0.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support.loopback_chat import LoopbackChat

pytestmark = [pytest.mark.harbor, pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Running a model on a release (Harbor)"


def readme_blocks(text: str) -> list[list[str]]:
    """The ```bash blocks of the Harbor section, each as its commands (continuation lines joined)."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end > 0 else len(text)]
    blocks = []
    for body in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", body)
        blocks.append([line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")])
    return blocks


def test_readme_blocks_are_found_and_name_what_the_test_runs():
    blocks = readme_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) == 2, blocks
    assert blocks[0][0].startswith("swe-taskflow export harbor ")
    assert any(c.startswith(".harbor-venv/bin/harbor run ") for c in blocks[1])
    assert blocks[1][-1].startswith("swe-taskflow verify ")


def _loopback_reply(body: dict, n: int) -> dict:
    """Hand-written replies: a model that writes a one-line answer where a turn asks for one and submits every
    turn (tool calls), a judge that says "incorrect"."""
    if body.get("tools"):
        last = body["messages"][-1]
        path = re.search(r"/tmp/answers/[\w.-]+\.md", str(last.get("content"))) if last.get("role") == "user" else None
        cmd = (f"mkdir -p /tmp/answers && echo '[hand-written loopback model] an answer' > {path.group(0)}"
               if path else "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")   # answer first, then submit
        msg = {"role": "assistant", "content": "[hand-written loopback model]", "tool_calls": [{
            "id": f"call_{n}", "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                {"command": cmd})}}]}
    else:
        msg = {"role": "assistant", "content": json.dumps(
            {"verdict": "incorrect", "reason": "[hand-written loopback judge]"})}
    return {"id": f"c{n}", "object": "chat.completion", "created": 1700000000 + n, "model": body["model"],
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if body.get("tools") else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}


def _run(cmd: str, cwd: Path, env: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    assert "model cost map" not in proc.stdout + proc.stderr, cmd     # LiteLLM never tried to reach GitHub
    return proc


def _trajectories(release: Path) -> list[tuple]:
    import pyarrow.parquet as pq
    rows = [r for f in sorted((release / "trajectories").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    return sorted((r["condition"], r["instance_id"], r["model"], r["trajectory_sha256"]) for r in rows)


def test_fresh_clone_make_example_then_the_readme_harbor_commands(tmp_path, harbor_venv):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    assert not (clone.parent / "shared").exists()
    os.symlink((ROOT / ".venv").resolve(), clone / ".venv")
    os.symlink(Path(harbor_venv).resolve(), clone / ".harbor-venv")
    for name in ("pyproject.toml", "setup.py"):     # older than the venvs' stamps: `make` skips the set-up
        os.utime(clone / name, (0, 0))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "SWE_TASKFLOW")) and k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env.update(PYTHONPATH=str(clone), PATH=f"{clone / '.venv' / 'bin'}:{os.environ['PATH']}",
               HARBOR_TELEMETRY="0",     # what README.md sets; the agent keeps LiteLLM's price list local itself
               SWE_TASKFLOW_HARBOR_VENV=str(clone / ".harbor-venv"))
    make_n = _run("make -n example", clone, env).stdout
    assert "pip install" not in make_n                # the linked venvs are used as they are

    _run("make example", clone, env)
    blocks = readme_blocks((clone / "README.md").read_text(encoding="utf-8"))
    export_all = blocks[0][0]
    out = _run(export_all, clone, env).stdout
    ds = clone / shlex.split(export_all)[shlex.split(export_all).index("--out") + 1]
    tasks = [p for p in ds.iterdir() if (p / "task.toml").is_file()]
    assert len(tasks) == 17 and "exported 17 tasks" in out      # every row, the 16 SWE-Bench Pro ones included
    assert json.loads((ds / "registry.json").read_text())[0]["name"] == "swe-taskflow-example-tfas_optimized"
    pro = [p for p in tasks if p.name.startswith("instance_")]
    assert all(any(p.glob("steps/*/tests/run_script.sh")) for p in pro)
    assert all(any(p.glob("steps/*/tests/parser.py")) for p in pro)

    loopback = LoopbackChat(_loopback_reply)
    online = {**env, "OPENAI_BASE_URL": loopback.url, "OPENAI_API_KEY": "sk-loopback-e2e-0123"}
    try:
        for cmd in blocks[0][1:]:
            _run(cmd, clone, online)
    finally:
        loopback.close()
    assert any(r["body"].get("tools") for r in loopback.requests)            # the model was asked (the example's task)
    assert any(not r["body"].get("tools") for r in loopback.requests)        # and the judge (on the answers it wrote)

    for cmd in blocks[1]:
        _run(cmd, clone, env)
    release = clone / "build" / "example" / "release"
    imported = _trajectories(release)
    assert [(c, i) for c, i, _, _ in imported] == [("tfas_optimized", "swe-taskflow__ticketdesk-1")] * 2
    deterministic, online = (m for _, _, m, _ in imported)   # keyed by what ran: <agent>/<model>#<settings8>
    assert re.fullmatch(r"swe-taskflow-mini-swe-agent/deterministic#[0-9a-f]{8}", deterministic), deterministic
    assert re.fullmatch(r"swe-taskflow-mini-swe-agent/(openai/)?gpt-5-mini#[0-9a-f]{8}", online), online
    oracle = json.loads(next((clone / "jobs" / "oracle").glob("*/result.json")).read_text())
    assert oracle["source"] == "swe-taskflow-example-tfas_optimized"        # run by name from the local registry
    assert oracle["verifier_result"]["rewards"]["resolved"] == 1.0

    again = subprocess.run(["bash", "-c", "make example"], cwd=clone, env=env, capture_output=True, text=True,
                           timeout=1800)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "kept 2 imported trajectories" in again.stdout + again.stderr
    assert _trajectories(release) == imported                                # kept, bound to unchanged rows
    _run(blocks[1][-1], clone, env)                                          # verify passes after the rebuild
    assert not (clone / "build" / "example" / "stale-trajectories").exists()
