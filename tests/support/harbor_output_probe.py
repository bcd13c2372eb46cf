"""Run in Harbor's venv by tests/container/test_harbor_output.py: one command printing ``MB`` megabytes through
the project's DockerEnvironment (the command helper, then a plain docker exec), and this process's memory
before and after, printed as one JSON line.

    .harbor-venv/bin/python tests/support/harbor_output_probe.py IMAGE WORKDIR MB
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path


def rss_mb() -> tuple[float, float]:
    """(resident, peak resident) MiB of this process, from /proc (what psutil's memory_info().rss reads)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


async def probe(image: str, work: Path, mb: int) -> dict:
    from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
    from harbor.models.trial.paths import TrialPaths

    from swe_taskflow_harbor.environment import DockerEnvironment

    out: dict = {}
    for helper in (True, False):
        root = work / ("helper" if helper else "api")
        (root / "environment").mkdir(parents=True)
        paths = TrialPaths(root / "trial")
        paths.mkdir()
        env = DockerEnvironment(environment_dir=root / "environment", environment_name="probe",
                                session_id=f"probe__out{int(helper)}", trial_paths=paths,
                                task_env_config=EnvironmentConfig(docker_image=image, network_mode="no-network"),
                                network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
                                command_helper=helper)
        await env.start(force_build=False)
        try:
            await env.exec("true")
            before = rss_mb()
            res = await env.exec(f"echo first-line; head -c {mb * 1000 * 1000} /dev/zero | tr '\\0' x; "
                                 "echo; echo last-line", user="root")
            after = rss_mb()
            text = res.stdout or ""
            out["helper" if helper else "api"] = {
                "rss_before_mb": round(before[0], 1), "rss_after_mb": round(after[0], 1),
                "peak_mb": round(after[1], 1), "kept_chars": len(text), "code": res.return_code,
                "starts": text[:10], "ends": text.rstrip()[-9:],
                "says_dropped": "bytes of output dropped here" in text}
        finally:
            await env.stop(delete=True)
    return out


def main() -> None:
    image, work, mb = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(asyncio.run(probe(image, work, mb))))


if __name__ == "__main__":
    main()
