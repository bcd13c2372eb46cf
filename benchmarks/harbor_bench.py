"""Harbor figures: an oracle trial of the example's own task against the floor of the commands it runs.

    make example          # once: build/example/release (the bench exports its tfas_optimized condition)
    .venv/bin/python benchmarks/harbor_bench.py [--rounds 2] [--parallel 1,2,4] [--release DIR] [--environment M:C]
        [--plain] [--ek KEY=VALUE ...]

Printed in one run (medians over ``--rounds``, each round runs the three measurements back to back, so a
busy machine slows all of them alike):

- ``trial_s``: wall time of ``harbor run -a oracle -e swe_taskflow_harbor.environment:DockerEnvironment``
  on swe-taskflow__ticketdesk-1 exported from ``tfas_optimized`` (6 steps), process start to exit; and
  where it went, from the trial's result.json (Harbor's start-up before the trial, environment set-up,
  agent and verifier phases, the rest). ``trial_in_job_s`` is the trial alone (its result.json start to
  end): what one more trial adds to a job, where Harbor's start-up is paid once;
- ``floor_s``: the same oracle and verifier commands through ``docker exec`` in one container of the same
  image (task folder mounted read-only; per step one exec copies the step's files, one runs solve.sh as
  the agent user, one runs test.sh as root), plus one ``docker run`` and one ``docker rm -f``;
- ``example_check_s``: ``swe-taskflow example check`` (the task's whole test suite before and after the
  gold patch in one container);
- the ratios trial/floor and trial/example check, and trials per minute at ``harbor run -n N -k N``;
- ``--plain``: each round also runs the trial with ``--ek command_helper=false`` (every command a Docker
  API exec, every transfer an archive call: the environment before its resident command helper), and each
  ``-n N`` job is followed by the same job without the helper, so the two are compared on the same
  machine state; ``load_average``: the 1-minute load before and after each
  round (the machine is shared; the figures mean little without it).
Needs Docker, the example's image (``swe-taskflow example build-image``) and ``make harbor-venv``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0",
       "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
ENV_CLASS = "swe_taskflow_harbor.environment:DockerEnvironment"
TASK = "swe-taskflow__ticketdesk-1"
CONDITION = "tfas_optimized"


def _venv() -> Path:
    return Path(os.environ.get("SWE_TASKFLOW_HARBOR_VENV", ROOT / ".harbor-venv"))


def harbor_job(dataset: Path, jobs: Path, name: str, n: int = 1, env_class: str = ENV_CLASS,
               ek: tuple[str, ...] = ()) -> tuple[float, Path, float]:
    t0 = time.time()
    proc = subprocess.run([str(_venv() / "bin" / "harbor"), "run", "-p", str(dataset), "-a", "oracle", "-e", env_class,
                           *[a for kv in ek for a in ("--ek", kv)],
                           "-o", str(jobs), "--job-name", name, "-n", str(n), "-k", str(n), "-y"],
                          capture_output=True, text=True, env=ENV, cwd=jobs.parent)
    wall = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(f"harbor run failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    trials = [p for p in (jobs / name).iterdir() if (p / "result.json").is_file()]
    for trial in trials:
        steps = json.loads((trial / "result.json").read_text())["step_results"]
        if any(s["exception_info"] for s in steps) or steps[-1]["verifier_result"]["rewards"]["reward"] != 1.0:
            raise SystemExit(f"the oracle trial {trial} did not end resolved: the figures would mean nothing")
    return wall, trials[0], t0


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def phases(trial: Path, t0: float, wall: float) -> dict[str, float]:
    """Where the trial's wall time went, from Harbor's own timings."""
    r = json.loads((trial / "result.json").read_text())
    setup = r["environment_setup"]
    agent = sum(_ts(s["agent_execution"]["finished_at"]) - _ts(s["agent_execution"]["started_at"])
                for s in r["step_results"])
    verify = sum(_ts(s["verifier"]["finished_at"]) - _ts(s["verifier"]["started_at"]) for s in r["step_results"])
    start, end = _ts(r["started_at"]), _ts(r["finished_at"])
    env_setup = _ts(setup["finished_at"]) - _ts(setup["started_at"])
    return {"before_trial": start - t0, "environment_setup": env_setup, "agent": agent, "verifier": verify,
            "rest_of_trial": (end - start) - env_setup - agent - verify, "after_trial": t0 + wall - end}


def floor(task_dir: Path, image: str) -> float:
    """The oracle's and verifier's commands with plain ``docker exec`` in one network-less container."""
    steps = [s["name"] for s in tomllib.loads((task_dir / "task.toml").read_text())["steps"]]
    name = f"stf-harbor-floor-{uuid.uuid4().hex[:10]}"
    from swe_taskflow.hygiene import OWNER_LABEL, owner_id
    t0 = time.time()
    try:
        subprocess.run(["docker", "run", "-d", "--name", name, "--network", "none", "--label",
                        f"{OWNER_LABEL}={owner_id()}", "-v", f"{task_dir}:/task:ro", "-w", "/app", image,
                        "sh", "-c", "sleep infinity"], check=True, capture_output=True)
        for step in steps:
            for user, cmd in (
                    ("root", f"rm -rf /solution /tests && cp -r /task/steps/{step}/solution /solution && "
                             f"cp -r /task/steps/{step}/tests /tests && mkdir -p /logs/agent /logs/verifier && "
                             "chmod 777 /logs/agent /logs/verifier"),
                    ("agent", "bash /solution/solve.sh > /logs/agent/oracle.txt 2>&1"),
                    ("root", "bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1")):
                subprocess.run(["docker", "exec", "-u", user, "-w", "/app", name, "bash", "-c", cmd], check=True,
                               capture_output=True)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
    return time.time() - t0


def example_check() -> float:
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "builder.cli", "example", "check"], check=True, capture_output=True,
                   env=ENV, cwd=ROOT)
    return time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--parallel", default="1,2,4", help="trials per minute at these -n (empty: skip)")
    ap.add_argument("--release", type=Path, default=ROOT / "build" / "example" / "release")
    ap.add_argument("--environment", default=ENV_CLASS, help="Harbor environment import path (to compare another)")
    ap.add_argument("--ek", action="append", default=[], metavar="KEY=VALUE", help="environment kwarg for harbor run")
    ap.add_argument("--plain", action="store_true",
                    help="each round also times the trial with --ek command_helper=false (the Docker API path)")
    args = ap.parse_args()
    ek = tuple(args.ek)
    if not (args.release / "data").is_dir():
        raise SystemExit(f"{args.release}: no release (run `make example` first)")
    from builder.evaluation.export import export_harbor
    with tempfile.TemporaryDirectory(prefix="harbor-bench-") as d:
        tmp = Path(d)
        res = export_harbor(args.release, CONDITION, tmp / "dataset", tasks=[TASK])
        task_dir = tmp / "dataset" / res.tasks[0]["dir"]
        image = tomllib.loads((task_dir / "task.toml").read_text())["environment"]["docker_image"]
        (tmp / "jobs").mkdir()
        rounds = []
        keys = ["trial_s", "trial_in_job_s", "floor_s", "example_check_s"]
        for k in range(args.rounds):
            load = [os.getloadavg()[0]]
            wall, trial, t0 = harbor_job(tmp / "dataset", tmp / "jobs", f"oracle{k}", env_class=args.environment, ek=ek)
            split = phases(trial, t0, wall)
            row = {"trial_s": wall, "trial_in_job_s": wall - split["before_trial"] - split["after_trial"],
                   "floor_s": floor(task_dir, image), "example_check_s": example_check(), "phases_s": split}
            if args.plain:
                wall, trial, t0 = harbor_job(tmp / "dataset", tmp / "jobs", f"plain{k}", env_class=args.environment,
                                             ek=(*ek, "command_helper=false"))
                split = phases(trial, t0, wall)
                row.update({"plain_trial_s": wall,
                            "plain_trial_in_job_s": wall - split["before_trial"] - split["after_trial"],
                            "plain_phases_s": split})
            load.append(os.getloadavg()[0])
            rounds.append({**row, "load_average": load})
        keys += ["plain_trial_s", "plain_trial_in_job_s"] if args.plain else []
        med = {key: statistics.median(r[key] for r in rounds) for key in keys}
        n_steps = len(tomllib.loads((task_dir / "task.toml").read_text())["steps"])
        figures: dict = {"task": f"{TASK}, {CONDITION}, {n_steps} steps",
                         "environment": args.environment, "environment_kwargs": list(ek), "rounds": args.rounds,
                         "load_average_1_5_15min_at_end": [round(x, 1) for x in os.getloadavg()],
                         "cpus": os.cpu_count(),
                         **{k: round(v, 1) for k, v in med.items()},
                         "trial/floor": round(med["trial_s"] / med["floor_s"], 2),
                         "trial/example_check": round(med["trial_s"] / med["example_check_s"], 2),
                         "trial_in_job/floor": round(med["trial_in_job_s"] / med["floor_s"], 2),
                         "trial_in_job/example_check": round(med["trial_in_job_s"] / med["example_check_s"], 2),
                         **({"plain_trial/floor": round(med["plain_trial_s"] / med["floor_s"], 2),
                             "plain_trial/example_check": round(med["plain_trial_s"] / med["example_check_s"], 2)}
                            if args.plain else {}),
                         "all_rounds": [{k: (round(v, 1) if isinstance(v, float) else [round(x, 1) for x in v]
                                             if isinstance(v, list) else {p: round(x, 1) for p, x in v.items()})
                                         for k, v in r.items()} for r in rounds]}
        per_minute: dict = {}
        plain_per_minute: dict = {}
        for n in [int(x) for x in args.parallel.split(",") if x.strip()]:
            wall, _, _ = harbor_job(tmp / "dataset", tmp / "jobs", f"parallel{n}", n=n, env_class=args.environment,
                                    ek=ek)
            per_minute[f"-n {n}"] = round(60 * n / wall, 2)
            if args.plain:   # right after, on the same machine state
                wall, _, _ = harbor_job(tmp / "dataset", tmp / "jobs", f"plain-parallel{n}", n=n,
                                        env_class=args.environment, ek=(*ek, "command_helper=false"))
                plain_per_minute[f"-n {n}"] = round(60 * n / wall, 2)
        if per_minute:
            figures["trials_per_minute"] = per_minute
        if plain_per_minute:
            figures["plain_trials_per_minute"] = plain_per_minute
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
