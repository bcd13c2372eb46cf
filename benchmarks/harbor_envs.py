"""Count the Harbor environments a command starts, and its wall time (issue 21: one environment per task).

Runs a ``swe-taskflow`` command in this process with the Harbor proof worker's client
(:class:`builder.proofs.harbor_runner.WorkerBackend`) wrapped: every ``start`` that the worker answered
(an environment started) and every worker process are counted. It measures any version of the code the same
way (it wraps the client, it changes nothing it does), so before/after figures are comparable:

    PYTHONPATH=$PWD .venv/bin/python benchmarks/harbor_envs.py -- build RECIPE --out DIR --until augment --quiet
    PYTHONPATH=$PWD .venv/bin/python benchmarks/harbor_envs.py -- verify RELEASE --reprove --repos DIR --sandbox harbor

Prints one JSON line on stderr: ``{"rc", "environments_started", "workers_started", "wall_s"}``.
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    from builder.cli import main as cli
    from builder.proofs import harbor_runner

    counts = {"environments_started": 0, "workers_started": 0}
    start, init = harbor_runner.WorkerBackend.start, harbor_runner.WorkerBackend.__init__

    def counted_start(self, task):
        got = start(self, task)
        counts["environments_started"] += 1
        return got

    def counted_init(self, *a, **kw):
        init(self, *a, **kw)
        counts["workers_started"] += 1

    harbor_runner.WorkerBackend.start = counted_start
    harbor_runner.WorkerBackend.__init__ = counted_init
    t0 = time.monotonic()
    try:
        rc = cli(argv)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    print(json.dumps({"rc": rc, **counts, "wall_s": round(time.monotonic() - t0, 1)}), file=sys.stderr)
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
