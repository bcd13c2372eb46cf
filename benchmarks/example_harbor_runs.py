"""Real Harbor runs of the example release's own task, and the result plots of docs/evaluate.md.

For each condition: `swe-taskflow export harbor build/example/release --condition C --tasks
swe-taskflow__ticketdesk-1`, then `harbor run` with the oracle and with the project's host-side agent on
mini-swe-agent's deterministic model (a hand-written script, written here: look around, apply the
turn's part of the gold patch, answer; the execute turn's answer is the reference read from the
exported solution, every other answer a fixed wrong one, so the plots show both verdicts). Then
`swe-taskflow evaluate import` of all jobs (qa answers judged from hand-written replies in a replay
store). The plots stay under WORK/results/; `--docs docs/img` copies them over the committed pictures of
docs/evaluate.md (only when asked: a run must not rewrite tracked files).

    make example   # build/example/release
    PYTHONPATH=$PWD SWE_TASKFLOW_HARBOR_VENV=$PWD/.harbor-venv .venv/bin/python benchmarks/example_harbor_runs.py \
        --work /tmp/example-runs [--conditions tfas_optimized,split_prompt,single_prompt] [--skip-runs] \
        [--docs docs/img]

Needs Docker, the example's image (`swe-taskflow example build-image`) and `.harbor-venv`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = "swe-taskflow__ticketdesk-1"
AGENT = "swe_taskflow_harbor.agent:MiniSweAgent"
ENV = "swe_taskflow_harbor.environment:DockerEnvironment"
WRONG_ANSWER = "[hand-written] It is hard-coded in ticketdesk/cli.py.\n"
JUDGE_MODEL = "recorded-judge"


def _env() -> dict:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0",
            "PYTHONPATH": str(ROOT)}


def script(task_dir: Path) -> list[dict]:
    """mini-swe-agent DeterministicModel outputs (hand-written): probe, change or answer, submit, per step."""
    steps = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["swe_taskflow"]["steps"]
    outs: list[dict] = []

    def say(content: str, command: str) -> None:
        outs.append({"role": "assistant", "content": f"[hand-written script] {content}",
                     "extra": {"actions": [{"command": command}], "cost": 0.0}})
    for s in steps:
        say("Look around.", f"git status --short | head -5; echo probe-{s['step']}")
        sol = task_dir / "steps" / s["step"] / "solution"
        if s["kind"] == "issue":
            part = (sol / "part.patch").read_text()
            if part:
                say("Change the code.", f"cat > /tmp/change.patch <<'PATCH'\n{part}PATCH\ngit apply /tmp/change.patch")
        else:
            text = (sol / "reference.md").read_text() if s["kind"] == "execute" else WRONG_ANSWER
            say("Answer.", f"mkdir -p /tmp/answers && cat > {s['answer_path']} <<'ANSWER'\n{text}ANSWER")
        say("Done.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    return outs


def judge_store(store: Path, release: Path) -> None:
    """Hand-written judge replies (tests/fixtures/llm): "correct" for a question's reference answer, "incorrect"
    for the script's wrong answer."""
    from swe_taskflow.release import open_release
    from builder.evaluation.scoring import JUDGE_PARAMS, JUDGE_STAGE, AnswerCase, judge_messages
    from builder.llm import get_backend
    judge = get_backend("replay", store=store, model=JUDGE_MODEL, params=dict(JUDGE_PARAMS))
    rel = open_release(release)
    fix = ROOT / "tests" / "fixtures" / "llm"
    for cond in ("tfas_optimized", "qa_last"):
        row = next((r for r in rel.rows(cond) if r["instance_id"] == TASK), None)
        for q in (row or {}).get("questions") or []:   # qa turns, and the judged part of debug/planning/review
            if not q.get("reference_answer"):
                continue
            for answer, name in ((q["reference_answer"], "qa_judge_ticketdesk_reference.json"),
                                 (WRONG_ANSWER, "qa_judge_ticketdesk_wrong.json")):
                data = json.loads((fix / name).read_text())
                req = judge.request(judge_messages(AnswerCase("x", 0, "qa", q, answer)))
                judge.store.put_text(req, data["text"], stage=JUDGE_STAGE, provenance="hand-written")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--release", type=Path, default=ROOT / "build" / "example" / "release")
    ap.add_argument("--conditions", default="tfas_optimized,split_prompt,single_prompt")
    ap.add_argument("--skip-runs", action="store_true", help="import the jobs already under --work")
    ap.add_argument("--docs", type=Path, default=None,
                    help="also copy the plots here as example-*.png (docs/img to refresh docs/evaluate.md's)")
    a = ap.parse_args(argv)
    venv = Path(os.environ.get("SWE_TASKFLOW_HARBOR_VENV") or ROOT / ".harbor-venv")
    cli = [sys.executable, "-m", "builder.cli"]
    jobs = []
    for cond in a.conditions.split(","):
        ds = a.work / f"ds-{cond}"
        if not a.skip_runs:
            shutil.rmtree(ds, ignore_errors=True)
            subprocess.run([*cli, "export", "harbor", str(a.release), "--condition", cond, "--out", str(ds),
                            "--tasks", TASK], check=True, env=_env())
            outputs = a.work / f"outputs-{cond}.json"
            outputs.write_text(json.dumps(script(ds / TASK), indent=1))
        for who, args in (("oracle", ["-a", "oracle"]),
                          ("mini", ["-a", AGENT, "-m", "deterministic", "--ak", "model_class=deterministic",
                                    "--ak", f"outputs={a.work / f'outputs-{cond}.json'}", "--resume-trajectory"])):
            name = f"{cond}-{who}"
            if not a.skip_runs:
                shutil.rmtree(a.work / "jobs" / name, ignore_errors=True)
                proc = subprocess.run([str(venv / "bin" / "harbor"), "run", "-p", str(ds), *args, "-e", ENV,
                                       "-o", str(a.work / "jobs"), "--job-name", name, "-n", "1", "-y"],
                                      env=_env(), cwd=a.work, capture_output=True, text=True)
                print(f"harbor run {name}: exit {proc.returncode}", flush=True)
                if proc.returncode:
                    print(proc.stdout[-2000:], proc.stderr[-2000:])
                    return 1
            jobs.append(str(a.work / "jobs" / name))
    store = a.work / "judge-store"
    judge_store(store, a.release)
    out = a.work / "results"
    scratch = a.work / "release-copy"            # the committed example build stays untouched
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(a.release, scratch)
    subprocess.run([*cli, "evaluate", "import", *jobs, "--release", str(scratch), "--out", str(out),
                    "--judge", "replay", "--judge-model", JUDGE_MODEL, "--judge-store", str(store)],
                   check=True, env=_env())
    print(f"plots: {out}")
    if a.docs is not None:
        a.docs.mkdir(parents=True, exist_ok=True)
        for png in ("accuracy_by_kind.png", "checkpoints.png"):
            shutil.copyfile(out / png, a.docs / f"example-{png}")
        print(f"copied to {a.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
