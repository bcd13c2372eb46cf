"""Run a bundled task's test command before and after its gold patch, and grade it like SWE-bench.

Both runs apply the task's ``test_patch`` first; FAIL_TO_PASS tests must fail before the gold
patch and pass after it, PASS_TO_PASS tests must pass in both. ``runner="docker"`` runs in the
task's own image (network none, as the ``agent`` user, the container thrown away); ``"host"``
runs in a temporary checkout with the host's python3 (for machines without Docker: the same
repository, commit and command, another interpreter build).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from swe_taskflow.errors import ConfigError
from swe_taskflow.owned import owned_temp
from swe_taskflow.testlog import grade, parse_unittest

from .image import AGENT_USER, WORKDIR
from .repo import commit_folder, git

RUNNERS = ("docker", "host")
TAIL_CHARS = 4000
#: At most this much of a test run's output is kept (a test command of a recipe's task may print without end).
MAX_OUTPUT_BYTES = 8 << 20


def _bounded(command: str) -> str:
    """``command`` with its output (stderr too) cut at MAX_OUTPUT_BYTES; the exit status stays the command's."""
    return f"{{ {{ {command}; }} 2>&1 | head -c {MAX_OUTPUT_BYTES}; exit ${{PIPESTATUS[0]}}; }}"


def _script(task, gold: bool, patches: str) -> str:
    steps = [f"git apply {patches}/test.patch"] + ([f"git apply {patches}/gold.patch"] if gold else [])
    return " && ".join(steps) + " && " + _bounded(task.test_command)


def _write_patches(task, folder: Path) -> None:
    (folder / "test.patch").write_text(task.test_patch, encoding="utf-8")
    (folder / "gold.patch").write_text(task.patch, encoding="utf-8")


def _run_docker(task, gold: bool, timeout_s: float) -> tuple[int | None, str]:
    from ..proofs.docker_runner import docker_client

    client = docker_client()
    with owned_temp("swe-taskflow-check-") as folder:
        tmp = str(folder)
        os.chmod(tmp, 0o755)
        _write_patches(task, Path(tmp))
        container = client.containers.create(
            task.image_name, ["bash", "-c", _script(task, gold, "/patches")], working_dir=WORKDIR,
            user=AGENT_USER, network_mode="none", volumes={tmp: {"bind": "/patches", "mode": "ro"}},
            mem_limit="1g", memswap_limit="1g", pids_limit=256, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], labels={"swe-taskflow.task-check": "1"})
        try:
            container.start()
            try:
                code = container.wait(timeout=timeout_s).get("StatusCode")
            except Exception:  # noqa: BLE001 - requests' ReadTimeout: the wall clock ran out
                container.kill()
                code = None
            return code, container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
        finally:
            container.remove(force=True)


def _run_host(task, files: Path, gold: bool, timeout_s: float) -> tuple[int | None, str]:
    with owned_temp("swe-taskflow-check-") as folder:
        tmp = str(folder)
        repo = Path(tmp, "app")
        commit = commit_folder(files, repo)
        if commit != task.base_commit:
            raise ConfigError("the bundled repository's commit is not the task's base_commit", path=str(files),
                              field="base_commit", expected=task.base_commit, actual=commit)
        _write_patches(task, Path(tmp))
        git(["apply", str(Path(tmp, "test.patch"))], repo)
        if gold:
            git(["apply", str(Path(tmp, "gold.patch"))], repo)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": tmp,
               "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            proc = subprocess.run(["bash", "-c", _bounded(task.test_command)], cwd=repo, env=env,
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or ""
            return None, out.decode("utf-8", "replace") if isinstance(out, bytes) else out
        return proc.returncode, proc.stdout


def run_tests(bundled, *, gold: bool, runner: str = "docker", timeout_s: float = 300) -> dict:
    """One run of the test command (test patch applied, gold patch too when ``gold``), parsed and graded."""
    task = bundled.task
    if runner not in RUNNERS:
        raise ConfigError("unknown runner", field="runner", actual=runner, expected=RUNNERS)
    if not task.test_command.strip():
        raise ConfigError("the task has no test_command", field="test_command", actual=task.instance_id)
    t0 = time.monotonic()
    if runner == "docker":
        code, output = _run_docker(task, gold, timeout_s)
    else:
        code, output = _run_host(task, bundled.files, gold, timeout_s)
    results = parse_unittest(output)
    return {"gold_patch": gold, "runner": runner, "exit_code": code, "results": results,
            "grade": grade(results, task.fail_to_pass, task.pass_to_pass),
            "seconds": round(time.monotonic() - t0, 2), "output_tail": output[-TAIL_CHARS:]}


def check_task(bundled, *, runner: str = "docker", timeout_s: float = 300) -> dict:
    """Both runs and the verdict: ``ok`` when F2P fail before and pass after and P2P pass in both."""
    task = bundled.task
    before = run_tests(bundled, gold=False, runner=runner, timeout_s=timeout_s)
    after = run_tests(bundled, gold=True, runner=runner, timeout_s=timeout_s)
    problems = [f"FAIL_TO_PASS {name} passes before the gold patch" for name in task.fail_to_pass
                if before["results"].get(name) == "passed"]
    problems += [f"FAIL_TO_PASS {n} is {s} after the gold patch" for n, s in after["grade"]["fail_to_pass"]["not_passed"].items()]
    for run in (before, after):
        when = "after" if run["gold_patch"] else "before"
        problems += [f"PASS_TO_PASS {n} is {s} {when} the gold patch"
                     for n, s in run["grade"]["pass_to_pass"]["not_passed"].items()]
    if not task.fail_to_pass:
        problems.append("the task names no FAIL_TO_PASS test")
    return {"instance_id": task.instance_id, "image": task.image_name if runner == "docker" else "host",
            "test_command": task.test_command, "ok": not problems, "problems": problems,
            "before": before, "after": after}

