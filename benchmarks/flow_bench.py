"""How long `flow measure` takes on a million messages, against a naive loop on the same file (prints figures; not a test).

    .venv/bin/python benchmarks/flow_bench.py [--messages 1000000] [--repeat 3] [--bootstrap 200] [--seed 0] [--large]

A labelled sessions JSONL file is generated from a seeded numpy Generator (session lengths 1..20,
all 16 labels; 1,000,000 messages are 95,342 sessions, 40 MB). Timed, each in its own process from
start to exit (the median of ``--repeat`` runs, with the child's peak memory from ``os.wait4``):

- ``swe-taskflow flow measure FILE --out FLOW.json`` (the CLI as a user runs it);
- the naive loop: 15 lines of pure Python (``json.loads`` + ``Counter`` over lengths, intents and
  transitions), the floor any reader has to beat.

Then, in this process: the sessions read by the reference line-by-line reader and by the Arrow
reader (they must agree), counting from intent codes, scoring, and a bootstrap. ``--large`` also
measures `flow measure` on 10x the messages (10,000,000: 400 MB) to show that memory stays bounded.
The CLI run is checked for heavy imports (torch, transformers, datasets, matplotlib, scipy) with
``python -X importtime``.
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
from pathlib import Path

import numpy as np

from swe_taskflow import flow
from swe_taskflow.bootstrap import bootstrap_score
from swe_taskflow.session_table import read_session_table
from swe_taskflow.session_table import read_sessions_report
from swe_taskflow.taxonomy import INTENTS

NAIVE_LOOP = """\
import json, sys
from collections import Counter

lengths, intents, transitions = Counter(), Counter(), Counter()
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        if not line.strip():
            continue
        labels = [m["intent"] for m in json.loads(line)["messages"]]
        lengths[len(labels)] += 1
        intents.update(labels)
        transitions.update(zip(["START"] + labels, labels + ["END"]))
print(sum(lengths.values()), sum(intents.values()), sum(transitions.values()))
"""

HEAVY = ("torch", "transformers", "datasets", "matplotlib", "scipy")


def synthetic_corpus(n_messages: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Session lengths (1..20) and intent codes drawn from ``default_rng(seed)``, ``n_messages`` in all."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 21, size=n_messages // 5)
    lengths = lengths[np.cumsum(lengths) <= n_messages]
    if lengths.sum() < n_messages:
        lengths = np.append(lengths, n_messages - lengths.sum())
    return lengths, rng.integers(0, len(INTENTS), size=int(lengths.sum()))


def write_corpus(path: Path, lengths: np.ndarray, codes: np.ndarray) -> None:
    """Our line format, as ``json.dumps`` writes it (one session a line); the same bytes for the same seed."""
    pieces = [json.dumps({"text": "", "intent": x}) for x in INTENTS]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    with path.open("w", encoding="utf-8") as fh:
        for start in range(0, lengths.size, 50_000):           # bounded memory for 10M messages
            stop = min(start + 50_000, lengths.size)
            block = codes[offsets[start]:offsets[stop]].tolist()
            base = offsets[start]
            fh.write("".join('{"session_id": "%d", "messages": [%s]}\n'
                             % (i, ", ".join([pieces[c] for c in block[offsets[i] - base:offsets[i + 1] - base]]))
                             for i in range(start, stop)))


#: A small process that starts each timed command and reports its rusage. Timed commands are not forked
#: from this benchmark directly: a child's peak RSS (ru_maxrss) counts the memory of the process it was
#: forked from, and this one holds the generated corpus.
LAUNCHER = """\
import json, os, subprocess, sys, time
for line in sys.stdin:
    argv = json.loads(line)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": usage.ru_utime + usage.ru_stime,
                      "peak_mib": usage.ru_maxrss / 1024, "rc": os.waitstatus_to_exitcode(status),
                      "err": err.decode("utf-8", "replace")[-500:]}), flush=True)
"""


class Launcher:
    """Runs commands from a small, separate process (see LAUNCHER)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def run(self, argv: list[str]) -> tuple[float, float, float]:
        """(wall seconds from start to exit, CPU seconds, peak RSS in MiB) of one run of ``argv``."""
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        if r["rc"]:
            raise SystemExit(f"{' '.join(argv)} failed ({r['rc']}): {r['err'].strip()}")
        return r["wall"], r["cpu"], r["peak_mib"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def timed_children(launcher: Launcher, label: str, argv: list[str], repeat: int) -> tuple[float, float, float]:
    """Median wall and CPU seconds and the peak memory of ``repeat`` runs (printed)."""
    runs = [launcher.run(argv) for _ in range(repeat)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    peak = max(r[2] for r in runs)
    print(f"{label:<50s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak {peak:6.0f} MiB"
          f"  (wall of each run: {', '.join(f'{r[0]:.2f}' for r in runs)})")
    return wall, cpu, peak


def measure_argv(path: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "builder.cli", "flow", "measure", str(path), "--out", str(out),
            "--measured-on", "2026-01-01"]


def arrow_parse(path: Path) -> None:
    """Arrow's JSON reader on the whole file with the reader's schema: the part no Arrow-based reader avoids."""
    import pyarrow as pa
    import pyarrow.json as pj

    from swe_taskflow.session_table import _PARSE

    pj.read_json(pa.BufferReader(path.read_bytes()), parse_options=_PARSE, memory_pool=pa.system_memory_pool())


def heavy_imports(path: Path, out: Path) -> list[str]:
    """Top-level heavy packages the CLI imports while measuring ``path`` (python -X importtime)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *measure_argv(path, out)[1:]],
                          capture_output=True, text=True, check=True)
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
             if line.startswith("import time:")}
    return sorted(names & set(HEAVY))


def _timed(label: str, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label:<50s} wall {time.perf_counter() - t0:6.2f} s  cpu {time.process_time() - c0:6.2f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each child process (median printed)")
    ap.add_argument("--bootstrap", type=int, default=200, help="resamples for the bootstrap timing (0 = skip)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--large", action="store_true", help="also measure 10x the messages (streaming, bounded memory)")
    args = ap.parse_args()

    launcher = Launcher()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lengths, codes = synthetic_corpus(args.messages, args.seed)
        path = tmp / "sessions.jsonl"
        write_corpus(path, lengths, codes)
        print(f"{int(lengths.sum()):,} messages in {lengths.size:,} sessions (seed {args.seed}), "
              f"{path.stat().st_size / 1e6:.1f} MB; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        naive = tmp / "naive.py"
        naive.write_text(NAIVE_LOOP, encoding="utf-8")
        floor = timed_children(launcher, "floor: python -c 'import numpy, pyarrow.json'",
                               [sys.executable, "-c", "import numpy, pyarrow.json, pyarrow.compute"], args.repeat)
        cli = timed_children(launcher, "swe-taskflow flow measure (process start to exit)",
                             measure_argv(path, tmp / "flow.json"), args.repeat)
        loop = timed_children(launcher, "naive loop: json.loads + Counter (start to exit)",
                              [sys.executable, str(naive), str(path)], args.repeat)
        print(f"flow measure vs the naive loop: {loop[0] / cli[0]:.2f}x faster in wall time, "
              f"{loop[1] / cli[1]:.2f}x in CPU time (goal >= 2.5x); start-up floor {floor[0]:.2f} s wall, "
              f"{floor[1]:.2f} s CPU")
        heavy = heavy_imports(path, tmp / "flow2.json")
        print(f"heavy modules imported by flow measure: {', '.join(heavy) if heavy else 'none'} "
              f"(checked: {', '.join(HEAVY)})")

        _timed("Arrow's JSON parse alone (pyarrow.json.read_json)", lambda: arrow_parse(path))
        lines_recs, _ = _timed("read, reference line reader (engine='lines')",
                               lambda: read_sessions_report(path, engine="lines"))
        table, _ = _timed("read, Arrow reader (read_session_table, counting only)",
                          lambda: read_session_table(path, keep_messages=False))
        if [r.intent_list() for r in lines_recs] != table.intent_lists():
            raise SystemExit("the Arrow reader and the line reader disagree")
        del lines_recs
        counts = _timed("count from intent codes (flow.counts_from_codes)", table.counts)
        names = np.asarray(INTENTS)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        half = [names[codes[offsets[i]:offsets[i + 1]]].tolist() for i in range(lengths.size // 2)]
        target = flow.measure(half, min_messages=3)
        res = _timed("normalize + score vs a target (TFAS, 3 JSDs)", lambda: flow.score(target, counts.normalized()))
        print(f"  TFAS {res.tfas:.3f}  S_L {res.S_L:.4f}  S_T {res.S_T:.4f}  S_R {res.S_R:.4f}")
        if args.bootstrap:
            sc = _timed("per-session sparse count matrix (table.session_counts)", table.session_counts)
            boot = _timed(f"bootstrap, {args.bootstrap} resamples of whole sessions",
                          lambda: bootstrap_score(target, sc, n_resamples=args.bootstrap, seed=args.seed))
            print(f"  TFAS 95% interval [{boot.tfas.lo:.3f}, {boot.tfas.hi:.3f}]")
        path.unlink()

        if args.large:
            big = tmp / "large.jsonl"
            lengths, codes = synthetic_corpus(10 * args.messages, args.seed)
            write_corpus(big, lengths, codes)
            del codes
            print(f"{int(lengths.sum()):,} messages in {lengths.size:,} sessions, {big.stat().st_size / 1e6:.0f} MB")
            timed_children(launcher, "swe-taskflow flow measure, 10x (start to exit)", measure_argv(big, tmp / "big.json"), 1)
            timed_children(launcher, "naive loop, 10x (start to exit)", [sys.executable, str(naive), str(big)], 1)
    launcher.close()


if __name__ == "__main__":
    main()
