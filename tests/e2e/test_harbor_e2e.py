"""End to end through real Harbor on the example's own task (swe-taskflow__ticketdesk-1), offline.

Export a four-turn release (three issue turns, one answer turn) -> Harbor's own loader, lint, schema
and digests accept it -> `harbor run` with the oracle agent and with the project's host-side
mini-swe-agent agent driven by mini-swe-agent's deterministic model (one conversation: the trajectory
grows across steps; /tests is absent while the agent works; the container has only a loopback
interface) -> checkpoint rewards rise to resolved -> `evaluate import` judges the answers through the
replay store (hand-written judge replies) and re-judges byte for byte -> `verify` -> `push` over the
recording transport with the trajectories config. No docker network is created at any point.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from builder.cli import main as cli_main
from builder.evaluation.export import export_harbor, task_digest
from builder.evaluation.scoring import JUDGE_PARAMS, JUDGE_STAGE, AnswerCase, judge_messages
from tests.support.example_release import CONDITION, build_example_release, example_question
from tests.support.fakehub import TEST_TOKEN as TOKEN
from tests.support.loopback_chat import LoopbackChat

pytestmark = [pytest.mark.harbor, pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
ENV_CLASS = "swe_taskflow_harbor.environment:DockerEnvironment"
AGENT_CLASS = "swe_taskflow_harbor.agent:MiniSweAgent"
WRONG_ANSWER = "[hand-written] It is hard-coded in ticketdesk/cli.py.\n"
JUDGE_MODEL = "recorded-judge"


LOOPBACK_KEY = "sk-loopback-test-key-0123456789"


def _env() -> dict:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0",
            "OPENAI_API_KEY": LOOPBACK_KEY}


class _ChatServer(LoopbackChat):
    """A chat endpoint that replays a hand-written script as tool calls; the recorded requests show what LiteLLM
    sent: one growing conversation."""

    def __init__(self, script: list[dict]):
        self.script = script
        super().__init__(self._reply)

    def _reply(self, body: dict, n: int) -> dict:
        step = self.script[min(n, len(self.script)) - 1]
        cmd = step["extra"]["actions"][0]["command"]
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n,
                "model": body["model"], "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": step["content"], "tool_calls": [{
                        "id": f"call_{n}", "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": cmd})}}]}}],
                "usage": {"prompt_tokens": 100 * n, "completion_tokens": 10, "total_tokens": 100 * n + 10}}


def _harbor(venv: Path, *args: str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "harbor"), *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def _networks() -> list[str]:
    return sorted(subprocess.run(["docker", "network", "ls", "-q", "--no-trunc"], capture_output=True, text=True,
                                 check=True).stdout.split())


@pytest.fixture(scope="module")
def world(tmp_path_factory, harbor_venv):
    from builder.bundled.image import build_task_image
    from builder.pipeline.repos import example_task as bundled_example
    bundled = bundled_example()
    build_task_image(bundled.task, bundled.files)
    tmp = tmp_path_factory.mktemp("harbor-e2e")
    release = build_example_release(tmp / "release")
    res = export_harbor(release, CONDITION, tmp / "dataset")
    task_dir = tmp / "dataset" / res.tasks[0]["dir"]
    networks = _networks()
    timings = {}
    runs = {}
    outputs = tmp / "outputs.json"
    script = _scripted_model(task_dir)
    outputs.write_text(json.dumps(script, indent=1))
    chat = _ChatServer(script)
    litellm_args = ["-a", AGENT_CLASS, "-m", "openai/gpt-4o-mini", "--ak",
                    "model_kwargs=" + json.dumps({"api_base": chat.url}), "--resume-trajectory"]
    for name, agent_args in (("oracle", ["-a", "oracle"]),
                             ("mini", ["-a", AGENT_CLASS, "-m", "deterministic", "--ak", "model_class=deterministic",
                                       "--ak", f"outputs={outputs}", "--resume-trajectory"]),
                             ("litellm", litellm_args)):
        t0 = time.monotonic()
        proc = _harbor(harbor_venv, "run", "-p", str(tmp / "dataset"), *agent_args, "-e", ENV_CLASS,
                       "-o", str(tmp / "jobs"), "--job-name", name, "-n", "1", "-y", cwd=tmp)
        timings[name] = time.monotonic() - t0
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        runs[name] = next(p for p in (tmp / "jobs" / name).iterdir() if (p / "result.json").is_file())
    chat.close()
    return {"tmp": tmp, "release": release, "task_dir": task_dir, "runs": runs, "timings": timings,
            "networks_before": networks, "networks_after": _networks(), "venv": harbor_venv, "chat": chat,
            "script": script}


def _scripted_model(task_dir: Path) -> list[dict]:
    """mini-swe-agent DeterministicModel outputs (hand-written script): probe, change, submit per turn."""
    steps = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["swe_taskflow"]["steps"]
    outs = []

    def say(content: str, command: str) -> None:
        outs.append({"role": "assistant", "content": f"[hand-written script] {content}",
                     "extra": {"actions": [{"command": command}], "cost": 0.0}})
    for s in steps:
        say("Look around.", "echo hidden-files=$(find /tests /solution /logs/verifier -type f 2>/dev/null | wc -l); "
                            f"cat /proc/net/dev; echo probe-{s['step']}")
        if s["kind"] == "issue":
            part = (task_dir / "steps" / s["step"] / "solution" / "part.patch").read_text()
            if part:
                say("Change the code.", f"cat > /tmp/change.patch <<'PATCH'\n{part}PATCH\ngit apply /tmp/change.patch")
        else:
            say("Answer.", f"mkdir -p /tmp/answers && cat > {s['answer_path']} <<'ANSWER'\n{WRONG_ANSWER}ANSWER")
        say("Done.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    return outs


def _result(trial: Path) -> dict:
    return json.loads((trial / "result.json").read_text())


def test_harbor_loads_lints_and_digests_the_export(world):
    venv, task_dir = world["venv"], world["task_dir"]
    code = ("import json,sys; from harbor.models.task.task import Task; from harbor.publisher.packager import Packager;"
            "from harbor.models.dataset.manifest import DatasetManifest; from pathlib import Path;"
            "t=Task(sys.argv[1]); m=DatasetManifest.from_toml_file(Path(sys.argv[1]).parent/'dataset.toml');"
            "print(json.dumps({'steps':[s.name for s in t.config.steps],'net':t.config.environment.network_mode.value,"
            "'user':t.config.agent.user,'digest':Packager.compute_content_hash(Path(sys.argv[1]))[0],"
            "'listed':m.tasks[0].digest}))")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code, str(task_dir)], capture_output=True, text=True,
                         env=_env(), check=True)
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert facts["steps"] == ["turn-01-issue", "turn-02-issue", "turn-03-issue", "turn-04-qa"]
    assert (facts["net"], facts["user"]) == ("no-network", "agent")
    assert "sha256:" + facts["digest"] == task_digest(task_dir) == facts["listed"]
    lint = _harbor(venv, "lint", str(task_dir), cwd=world["tmp"])
    assert lint.returncode == 0, lint.stdout + lint.stderr
    schema = _harbor(venv, "task", "schema", cwd=world["tmp"])
    kept = json.loads((ROOT / "tests/fixtures/harbor/task-schema-harbor-0.25.0.json").read_text())
    assert json.loads(schema.stdout) == kept        # the always-on tests validate against Harbor's current schema


def test_no_network_was_created_and_containers_had_none(world):
    assert world["networks_after"] == world["networks_before"]
    traj = json.loads((world["runs"]["mini"] / "steps" / "turn-04-qa" / "agent" / "trajectory.json").read_text())
    probes = [r["content"] for s in traj["steps"] if s["source"] == "agent" and s.get("observation")
              for r in s["observation"]["results"] if "probe-" in (r.get("content") or "")]
    assert len(probes) == 4
    for p in probes:
        out = json.loads(p)["output"]
        interfaces = [line.split(":")[0].strip() for line in out.splitlines() if ":" in line and "|" not in line]
        assert interfaces == ["lo"], p                          # network none: loopback only
        # tests/ arrives at verification only, and no verifier output (test names, patches) is left for the agent
        assert "hidden-files=0" in out, p


@pytest.mark.parametrize("run", ["oracle", "mini", "litellm"])
def test_checkpoints_rise_to_resolved(world, run):
    steps = _result(world["runs"][run])["step_results"]
    assert [s["step_name"] for s in steps] == ["turn-01-issue", "turn-02-issue", "turn-03-issue", "turn-04-qa"]
    rewards = [s["verifier_result"]["rewards"] for s in steps]
    assert rewards[0]["clean_resolved"] == 0.0 and rewards[0]["clean_p2p_pass_rate"] == 1.0
    f2p = [r["f2p_pass_rate"] for r in rewards[:3]]
    assert f2p == sorted(f2p) and f2p[-1] == 1.0
    assert [r["resolved"] for r in rewards[:3]][-1] == 1.0 and rewards[3]["answered"] == 1.0
    assert all(s["exception_info"] is None for s in steps)


def test_one_conversation_grows_across_steps(world):
    trial = world["runs"]["mini"]
    sizes, users = [], []
    for name in ("turn-01-issue", "turn-02-issue", "turn-03-issue", "turn-04-qa"):
        traj = json.loads((trial / "steps" / name / "agent" / "trajectory.json").read_text())
        assert traj["schema_version"].startswith("ATIF-")
        sizes.append(len(traj["steps"]))
        users.append([s["message"] for s in traj["steps"] if s["source"] == "user"])
    assert sizes == sorted(sizes) and len(set(sizes)) == 4            # strictly growing
    assert [len(u) for u in users] == [1, 2, 3, 4]                     # one user message per turn so far
    assert all(users[k][:k + 1] == users[-1][:k + 1] for k in range(4))   # earlier turns kept verbatim
    q = example_question()
    assert q.question in users[-1][3] and "/tmp/answers/turn-04-qa.md" in users[-1][3]


def test_litellm_model_on_an_openai_compatible_endpoint(world):
    """The real LiteLLM path: every request carries the whole conversation so far; usage becomes tokens/cost."""
    reqs = world["chat"].requests
    assert len(reqs) == len(world["script"])
    sizes = [len(r["body"]["messages"]) for r in reqs]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    for a, b in zip(reqs, reqs[1:]):          # one conversation: each request extends the previous one
        assert b["body"]["messages"][:len(a["body"]["messages"])] == a["body"]["messages"]
    assert all(r["auth"] == f"Bearer {LOOPBACK_KEY}" for r in reqs)
    steps = _result(world["runs"]["litellm"])["step_results"]
    tokens_in = sum(s["agent_result"]["n_input_tokens"] for s in steps)
    assert tokens_in == sum(100 * n for n in range(1, len(reqs) + 1))
    assert sum(s["agent_result"]["cost_usd"] for s in steps) > 0          # priced from LiteLLM's local cost map
    for path in world["runs"]["litellm"].rglob("*"):                     # the key is never written down
        if path.is_file():
            assert LOOPBACK_KEY not in path.read_text(errors="replace"), path


def _judge_store(world) -> Path:
    from builder.llm import get_backend
    store = world["tmp"] / "judge-store"
    judge = get_backend("replay", store=store, model=JUDGE_MODEL, params=dict(JUDGE_PARAMS))
    q = example_question().to_dict()
    fix = ROOT / "tests" / "fixtures" / "llm"
    for answer, name in ((q["reference_answer"], "qa_judge_ticketdesk_reference.json"),
                         (WRONG_ANSWER, "qa_judge_ticketdesk_wrong.json")):
        data = json.loads((fix / name).read_text())
        assert data["provenance"] == "hand-written"
        req = judge.request(judge_messages(AnswerCase("x", 3, "qa", q, answer)))
        judge.store.put_text(req, data["text"], stage=JUDGE_STAGE, provenance="hand-written")
    return store


def test_evaluate_import_verify_and_push(world, hub, capsys, tmp_path):
    from builder.release.push import push_release
    jobs = [str(world["tmp"] / "jobs" / n) for n in ("oracle", "mini", "litellm")]
    store = _judge_store(world)
    args = ["evaluate", "import", *jobs, "--release", str(world["release"]), "--judge", "replay",
            "--judge-model", JUDGE_MODEL, "--judge-store", str(store)]
    assert cli_main([*args, "--out", str(tmp_path / "r1")]) == 0
    doc = json.loads((tmp_path / "r1" / "results.json").read_text())
    groups = {g["model"]: g for g in doc["groups"]}
    assert sorted(groups) == ["deterministic", "gpt-4o-mini", "oracle"]
    assert groups["oracle"]["resolve_rate"]["mean"] == 1.0 and groups["oracle"]["answer_accuracy"]["mean"] == 1.0
    mini = groups["deterministic"]
    assert mini["resolve_rate"]["mean"] == 1.0 and mini["answer_accuracy"]["mean"] == 0.0
    assert mini["checkpoint_labels"] == ["clean", "after issue turn 1", "after issue turn 2", "after issue turn 3"]
    assert mini["checkpoint_curves"]["resolved"]["mean"][0] == 0.0 and mini["checkpoint_curves"]["resolved"]["mean"][-1] == 1.0
    verdicts = [a for t in doc["trials"] for a in t["answers"]]
    assert {a["verdict"] for a in verdicts} == {"correct", "incorrect"}
    assert all(a["judge"] == f"qa-judge:replay:{JUDGE_MODEL}" and a["detail"]["replayed"] for a in verdicts)
    assert doc["judge"]["prompt_sha256"] == verdicts[0]["detail"]["prompt_sha256"]
    assert (tmp_path / "r1" / "checkpoints.png").stat().st_size > 5000
    assert (tmp_path / "r1" / "accuracy_by_kind.png").stat().st_size > 5000
    assert doc["trajectories"]["added"] == 2                 # the oracle writes no trajectory
    llm = groups["gpt-4o-mini"]
    assert llm["tokens_in"] > 0 and llm["cost_usd"] > 0 and llm["resolve_rate"]["mean"] == 1.0
    # re-judging offline gives the same verdicts, byte for byte
    assert cli_main([*args, "--out", str(tmp_path / "r2"), "--no-trajectories"]) == 0
    again = json.loads((tmp_path / "r2" / "results.json").read_text())
    assert json.dumps(again["trials"], sort_keys=True) == json.dumps(doc["trials"], sort_keys=True)
    # verify checks the trajectories' binding; push publishes them
    assert cli_main(["verify", str(world["release"])]) == 0
    import pyarrow.parquet as pq
    traj_files = sorted((world["release"] / "trajectories").glob("*.parquet"))
    rows = pq.read_table(traj_files[0]).to_pylist()
    assert sorted((r["instance_id"], r["condition"], r["model"].split("#")[0]) for r in rows) == [   # what ran
        ("swe-taskflow__ticketdesk-1", CONDITION, "swe-taskflow-mini-swe-agent/deterministic"),
        ("swe-taskflow__ticketdesk-1", CONDITION, "swe-taskflow-mini-swe-agent/gpt-4o-mini")]
    assert all([c["resolved"] for c in r["checkpoints"]][-1] is True for r in rows)
    assert all(r["qa_answers"][0]["verdict"] == "incorrect" for r in rows)
    result = push_release(world["release"], "test-org/ticketdesk-harbor", endpoint=hub.endpoint)
    assert any(p.startswith("trajectories/") for p in result.files)
    assert TOKEN not in capsys.readouterr().out


def test_wall_times_are_reported(world):
    # figures for benchmarks/harbor_bench.py; the test itself asserts nothing about speed
    print(json.dumps({k: round(v, 1) for k, v in world["timings"].items()}))
    assert set(world["timings"]) == {"oracle", "mini", "litellm"}
