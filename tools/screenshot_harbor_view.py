"""Look at an `evaluate view-jobs` folder in Harbor's viewer as a person does (issue 36): serve it with
``harbor view`` on 127.0.0.1 and take headless Chromium screenshots of the job list, a job page and a trial page.

    .venv/bin/swe-taskflow evaluate view-jobs build/example/release --out /tmp/view
    .venv/bin/python -m tools.screenshot_harbor_view /tmp/view --out /tmp/shots [--harbor .harbor-venv/bin/harbor]

Writes ``jobs.png``, ``job.png`` (the first job) and ``trial.png`` (its first trial) and prints what the viewer's
API counts for them. docs/img/harbor-view-*.png were taken this way (docs/evaluate.md). The viewer is a
JavaScript page: Chromium gets a virtual-time budget to fetch the API before the shot; it reaches nothing but
the loopback server (``--proxy-server`` to a closed port; loopback bypasses it).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from tools.screenshot_report import browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base: str, path: str):
    with urllib.request.urlopen(base + path, timeout=10) as r:   # noqa: S310 (loopback only)
        return json.loads(r.read())


def shoot(url: str, out: Path, *, width: int = 1440, height: int = 900) -> Path:
    exe = browser()
    if exe is None:
        raise SystemExit("no Chromium on PATH: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--proxy-server=127.0.0.1:9", "--no-first-run", f"--user-data-dir={tmp}/profile",
                        "--virtual-time-budget=15000", f"--window-size={width},{height}",
                        f"--screenshot={out.resolve()}", url], check=True, capture_output=True, timeout=180)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="an `evaluate view-jobs` folder")
    ap.add_argument("--out", type=Path, required=True, help="folder for the PNGs")
    ap.add_argument("--harbor", default=".harbor-venv/bin/harbor")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([a.harbor, "view", str(a.folder), "--jobs", "--host", "127.0.0.1", "--port",
                               str(port), "--no-build"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={"HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                   "PATH": "/usr/bin:/bin"})
    try:
        for _ in range(120):
            try:
                jobs = api(base, "/api/jobs")["items"]
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"harbor view did not answer on {base}")
        job = jobs[0]["name"]
        trial = api(base, f"/api/jobs/{quote(job)}/trials")["items"][0]["name"]
        for name, path in (("jobs", "/"), ("job", f"/jobs/{quote(job)}"),
                           ("trial", f"/jobs/{quote(job)}/trials/{quote(trial)}")):
            print(shoot(base + path, a.out / f"{name}.png"))
        print(json.dumps({"jobs": jobs, "job": api(base, f"/api/jobs/{quote(job)}").get("stats")}, indent=1,
                         default=str)[:4000])
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
