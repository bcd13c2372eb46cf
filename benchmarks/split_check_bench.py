"""``split check`` on one huge issue: time against issue size, now and before the linear rewrite.

    .venv/bin/python benchmarks/split_check_bench.py [--max-kb 1024] [--before-max-kb 128]

The issue is real SWE-Bench Pro text (problem statement + requirements of one task after another,
from ../shared (``$SWE_TASKFLOW_SHARED`` when set) when present, else the 16 bundled example tasks, each copy
numbered so sentences stay distinct) up to the size asked. Two splits are checked: the issue cut verbatim into
3 turns, and the same with every 7th paragraph dropped (so the requirement-coverage search runs). "before"
loads the quadratic implementation (one regex search per artifact over the whole text, every turn sentence
against every issue sentence) from git history and times it up to ``--before-max-kb``, then extrapolates to
1 MB with a fitted ``a*n^2 + b*n`` (``a, b >= 0``: a time never comes out negative). The bundled fallback is
16 tasks repeated: too few distinct sentences for the old code's quadratic cost to show, so its timings are
printed but not extrapolated.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from swe_taskflow import split_checks as now  # noqa: E402
from tools.shared_data import shared_data  # noqa: E402

SHARED = shared_data("swe-bench-pro/swe_bench_pro_public_731.jsonl")
EXAMPLE = ROOT / "builder/data/example/tasks.jsonl"
#: The last commit with the quadratic split checks.
BEFORE_COMMIT = "f1e7092"


def issue_text(nbytes: int) -> str:
    path = SHARED if SHARED.exists() else EXAMPLE
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    parts, n, copy = [], 0, 0
    while n < nbytes:
        for r in rows:
            text = f"{r['problem_statement']}\n\nRequirements:\n{r.get('requirements') or ''}"
            if copy:   # a second pass over the bundled tasks: keep sentences distinct
                text = text.replace(". ", f" (copy {copy}). ")
            parts.append(text)
            n += len(text.encode("utf-8"))
            if n >= nbytes:
                break
        copy += 1
    return "\n\n".join(parts)


def splits(text: str) -> dict[str, list[str]]:
    paras = text.split("\n\n")
    k = len(paras) // 3
    cuts = ((0, k), (k, 2 * k), (2 * k, len(paras)))
    return {"verbatim": ["\n\n".join(paras[a:b]) for a, b in cuts],
            "dropped": ["\n\n".join(p for i, p in enumerate(paras[a:b]) if i % 7 != 3) for a, b in cuts]}


def timed(module, text: str, turns: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    violations = module.check_split(text, turns)
    return time.perf_counter() - t0, len(violations)


def load_before():
    """The pre-rewrite module from git history, or None outside a git checkout."""
    try:
        src = subprocess.run(["git", "show", f"{BEFORE_COMMIT}:swe_taskflow/split_checks.py"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    tmp = Path(tempfile.mkdtemp()) / "split_checks_before.py"
    tmp.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("split_checks_before", tmp)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def fit_quadratic(points: list[tuple[int, float]], n: int) -> float:
    """``a*n^2 + b*n`` least-squares fitted with ``a, b >= 0``: noisy timings cannot bend it below zero."""
    import numpy as np
    from scipy.optimize import nnls

    x = np.array([p[0] for p in points], float) / n   # in units of n: a well-conditioned system
    y = np.array([p[1] for p in points], float)
    a, b = nnls(np.stack([x * x, x], 1), y)[0]
    return float(a + b)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-kb", type=int, default=1024)
    ap.add_argument("--before-max-kb", type=int, default=128, help="0: skip the pre-rewrite timings")
    args = ap.parse_args()
    print(f"issue text from {'../shared (731 SWE-Bench Pro tasks)' if SHARED.exists() else EXAMPLE}")
    print(f"{'size':>8} {'version':>7} {'split':>9} {'seconds':>8} {'us/byte':>8} {'violations':>10}")
    sizes = [kb for kb in (16, 32, 64, 128, 256, 512, 1024, 2048) if kb <= args.max_kb]
    before = load_before() if args.before_max_kb else None
    before_pts: dict[str, list[tuple[int, float]]] = {"verbatim": [], "dropped": []}
    for kb in sizes:
        text = issue_text(kb << 10)
        n = len(text.encode("utf-8"))
        for name, turns in splits(text).items():
            versions = [("now", now)] + ([("before", before)] if before is not None and kb <= args.before_max_kb else [])
            for label, mod in versions:
                dt, nv = timed(mod, text, turns)
                if label == "before":
                    before_pts[name].append((n, dt))
                print(f"{n / 1024:>7.0f}K {label:>7} {name:>9} {dt:>8.2f} {1e6 * dt / n:>8.2f} {nv:>10}", flush=True)
    if before is not None and not SHARED.exists():
        print("before: not extrapolated to 1024K: the bundled fallback text (16 example tasks repeated) is too "
              "small to extrapolate from; set SWE_TASKFLOW_SHARED to a folder with the 731 SWE-Bench Pro tasks")
    elif before is not None and len(before_pts["verbatim"]) >= 2:
        n = 1 << 20
        for name, pts in before_pts.items():
            print(f"before, {name}, extrapolated to 1024K (a*n^2 + b*n fitted on {len(pts)} sizes): "
                  f"{fit_quadratic(pts, n):.0f} s")


if __name__ == "__main__":
    main()
