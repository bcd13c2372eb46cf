"""The generic stage runner: keys, caching, dry-run plan, atomic commit, and kill -9 resumption.

These tests use small stages written here (no models, no containers) so they run in about a second;
the real pipeline's determinism and resumption are tested in tests/e2e/test_build_example.py.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from builder.pipeline import artifacts
from builder.pipeline.cache import StageCache
from builder.pipeline.folder_hash import tree_hash
from builder.pipeline.build_progress import BuildProgress
from builder.pipeline.runner import Stage, plan, run_stages
from swe_taskflow.errors import ConfigError, TaskflowError

ROOT = Path(__file__).resolve().parents[2]


def _recipe(tmp_path: Path, n: int = 5, factor: int = 2):
    data = tmp_path / "numbers.txt"
    if not data.exists():
        data.write_text("\n".join(str(i) for i in range(n)) + "\n")
    return SimpleNamespace(base=tmp_path, data=data, factor=factor)


@dataclass
class NumsSummary:
    total: int | None = None


@dataclass
class Nums:
    nums: list = artifacts.rows("nums.jsonl")
    summary: NumsSummary = field(default_factory=NumsSummary)


@dataclass
class Scaled:
    scaled: list = artifacts.rows("scaled.jsonl")
    clock: dict | None = artifacts.document("clock.json", volatile=True)   # must not change the hash
    summary: NumsSummary = field(default_factory=NumsSummary)


@dataclass(frozen=True)
class NoInputs:
    pass


@dataclass(frozen=True)
class ScaleInputs:
    ingest: Nums


def _stages(calls: list[str]):
    def ingest(inputs, ctx):
        calls.append("ingest")
        nums = [int(x) for x in ctx.recipe.data.read_text().split()]
        ctx.progress.set_total(len(nums))
        ctx.progress.advance(len(nums))
        return Nums(nums=[{"n": x} for x in nums])

    def scale(inputs, ctx):
        calls.append("scale")
        out = [{"n": x["n"] * ctx.recipe.factor} for x in inputs.ingest.nums]
        ctx.progress.set_total(len(out))
        ctx.progress.advance(len(out), failed=sum(1 for x in out if x["n"] == 0))
        return Scaled(scaled=out, clock={"t": time.time()}, summary=NumsSummary(total=sum(x["n"] for x in out)))

    return [
        Stage("ingest", ingest, NoInputs, Nums, files=lambda r: [r.data]),
        Stage("scale", scale, ScaleInputs, Scaled, config=lambda r: {"factor": r.factor}),
    ]


def test_second_run_is_cached_and_hashes_agree(tmp_path):
    calls: list[str] = []
    recipe = _recipe(tmp_path)
    first = run_stages(_stages(calls), recipe, StageCache(tmp_path / "cache"))
    second = run_stages(_stages(calls), recipe, StageCache(tmp_path / "cache"))
    assert calls == ["ingest", "scale"]
    assert [r.status for r in first] == ["ran", "ran"]
    assert [r.status for r in second] == ["cached", "cached"]
    assert [r.output_hash for r in first] == [r.output_hash for r in second]
    assert artifacts.load(Scaled, second[1].path).scaled == [{"n": x} for x in (0, 2, 4, 6, 8)]
    assert second[1].summary["total"] == 20 and second[1].summary["items_failed"] == 1


def test_clean_builds_in_two_caches_give_identical_hashes(tmp_path):
    recipe = _recipe(tmp_path)
    a = run_stages(_stages([]), recipe, StageCache(tmp_path / "a"))
    time.sleep(0.01)
    b = run_stages(_stages([]), recipe, StageCache(tmp_path / "b"))
    assert [(r.key, r.output_hash) for r in a] == [(r.key, r.output_hash) for r in b]
    # the volatile file differs but is outside the content hash
    assert artifacts.load(Scaled, a[1].path).clock != artifacts.load(Scaled, b[1].path).clock
    assert tree_hash(a[1].path) == a[1].output_hash


def test_config_change_reruns_only_downstream(tmp_path):
    calls: list[str] = []
    run_stages(_stages(calls), _recipe(tmp_path, factor=2), StageCache(tmp_path / "c"))
    calls.clear()
    res = run_stages(_stages(calls), _recipe(tmp_path, factor=3), StageCache(tmp_path / "c"))
    assert calls == ["scale"]
    assert [r.status for r in res] == ["cached", "ran"]


def test_input_file_change_reruns_everything(tmp_path):
    calls: list[str] = []
    recipe = _recipe(tmp_path)
    run_stages(_stages(calls), recipe, StageCache(tmp_path / "c"))
    recipe.data.write_text("7\n8\n")
    calls.clear()
    res = run_stages(_stages(calls), recipe, StageCache(tmp_path / "c"))
    assert calls == ["ingest", "scale"]
    assert artifacts.load(Scaled, res[1].path).scaled == [{"n": 14}, {"n": 16}]


def test_plan_reports_cached_and_pending(tmp_path):
    recipe = _recipe(tmp_path)
    cache = StageCache(tmp_path / "c")
    before = plan(_stages([]), recipe, cache)
    assert [r.status for r in before] == ["would-run", "pending"]
    run_stages(_stages([]), recipe, cache, until="ingest")
    mid = plan(_stages([]), recipe, cache)
    assert [r.status for r in mid] == ["cached", "would-run"]


def test_tampered_cache_entry_is_rebuilt(tmp_path):
    calls: list[str] = []
    recipe = _recipe(tmp_path)
    res = run_stages(_stages(calls), recipe, StageCache(tmp_path / "c"))
    (res[1].path / "scaled.jsonl").write_text('{"n": 999}\n')
    calls.clear()
    res2 = run_stages(_stages(calls), recipe, StageCache(tmp_path / "c"))
    assert calls == ["scale"]
    assert artifacts.load(Scaled, res2[1].path).scaled == [{"n": x} for x in (0, 2, 4, 6, 8)]


def test_failing_stage_leaves_no_cache_entry(tmp_path):
    @dataclass(frozen=True)
    class BoomInputs:
        scale: Scaled

    def boom(inputs, ctx):
        (ctx.folder("half") / "half.json").write_text("{")
        raise RuntimeError("disk on fire")

    stages = [*_stages([]), Stage("boom", boom, BoomInputs)]
    with pytest.raises(TaskflowError, match="stage 'boom' failed: RuntimeError: disk on fire"):
        run_stages(stages, _recipe(tmp_path), StageCache(tmp_path / "c"))
    assert not (tmp_path / "c" / "stages" / "boom").exists()
    assert [r.status for r in plan(stages, _recipe(tmp_path), StageCache(tmp_path / "c"))] == \
        ["cached", "cached", "would-run"]


def test_graph_and_names_are_checked(tmp_path):
    stages = _stages([])
    with pytest.raises(ConfigError, match="needs 'ingest'"):
        run_stages([stages[1]], _recipe(tmp_path), StageCache(tmp_path / "c"))
    with pytest.raises(ConfigError, match="unknown stage"):
        run_stages(stages, _recipe(tmp_path), StageCache(tmp_path / "c"), force=["nope"])


def test_second_concurrent_build_is_refused(tmp_path):
    first = StageCache(tmp_path / "c")
    first.lock()
    try:
        with pytest.raises(ConfigError, match="another build is using this cache"):
            StageCache(tmp_path / "c").lock()
    finally:
        first.unlock()


def test_progress_lines_name_stage_counts_and_status(tmp_path):
    stream = io.StringIO()
    run_stages(_stages([]), _recipe(tmp_path), StageCache(tmp_path / "c"),
               progress=BuildProgress(2, stream=stream, interval_s=0))
    lines = stream.getvalue().splitlines()
    final = [line for line in lines if line.rstrip().endswith("ran")]
    assert len(final) == 2
    assert "[2/2] scale" in final[1] and "5/5 done" in final[1] and "1 failed" in final[1]


_TOY = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from types import SimpleNamespace
    from builder.pipeline.cache import StageCache
    from builder.pipeline.runner import Stage, run_stages

    from dataclasses import dataclass
    from builder.pipeline import artifacts

    @dataclass
    class Squares:
        squares: list = artifacts.rows("squares.jsonl")

    @dataclass
    class Total:
        total: dict | None = artifacts.document("total.json")

    @dataclass(frozen=True)
    class NoInputs:
        pass

    @dataclass(frozen=True)
    class TotalInputs:
        slow: Squares

    def slow(inputs, ctx):
        ctx.progress.set_total(40)
        out = []
        for i in range(40):
            key = f"{i:064d}"
            got = ctx.items.get(key)
            if got is None:
                time.sleep(0.03)
                got = {"i": i, "sq": i * i}
                ctx.items.put(key, got)
            out.append(got)
            ctx.progress.advance()
        return Squares(out)

    def total(inputs, ctx):
        return Total({"total": sum(x["sq"] for x in inputs.slow.squares)})

    recipe = SimpleNamespace(base=Path("."))
    res = run_stages([Stage("slow", slow, NoInputs, Squares), Stage("total", total, TotalInputs, Total)], recipe,
                     StageCache(sys.argv[1]))
    print(json.dumps({r.name: r.output_hash for r in res}))
""")


@pytest.mark.slow
def test_kill_9_mid_stage_then_rerun_gives_uninterrupted_hashes(tmp_path):
    script = tmp_path / "toy.py"
    script.write_text(_TOY)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    clean = subprocess.run([sys.executable, str(script), str(tmp_path / "clean")], capture_output=True,
                           text=True, env=env, check=True, timeout=60)
    expected = json.loads(clean.stdout)

    cache = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, str(script), str(cache)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    items = cache / "items" / "slow"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list(items.rglob("*.json"))) < 10:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (cache / "stages" / "slow").exists(), "the stage finished before the kill"
    assert list((cache / "tmp").iterdir()), "the killed run left its temporary folder"
    done_before = len(list(items.rglob("*.json")))

    rerun = subprocess.run([sys.executable, str(script), str(cache)], capture_output=True, text=True,
                           env=env, check=True, timeout=60)
    assert json.loads(rerun.stdout) == expected
    assert not list((cache / "tmp").iterdir())
    assert 10 <= done_before < 40


def test_failures_meant_to_fail_are_said_so_ran_and_cached_without_changing_the_hash(tmp_path):
    """Issue 25: "proofs 13/13 done 3 failed" gave no hint that the example's three broken questions fail on
    purpose. A stage says which failures its rows expect; the line says so when it ran and when cached, and
    the count lives in the stage record, so the output hash (named in a release's provenance) is unchanged."""
    def expecting(calls):
        stages = _stages(calls)
        plain = stages[1].run

        def scale(inputs, ctx):
            out = plain(inputs, ctx)
            ctx.progress.advance(0, expected=1)   # the one failure (n == 0) is a deliberately broken row
            return out

        return [stages[0], Stage("scale", scale, ScaleInputs, Scaled, config=lambda r: {"factor": r.factor})]

    recipe = _recipe(tmp_path)
    plain = run_stages(_stages([]), recipe, StageCache(tmp_path / "plain"), progress=BuildProgress(2, quiet=True))
    lines = []
    for _ in range(2):   # ran, then cached
        stream = io.StringIO()
        res = run_stages(expecting([]), recipe, StageCache(tmp_path / "c"), progress=BuildProgress(2, stream=stream))
        lines.append(stream.getvalue().splitlines()[-1])
        assert res[1].output_hash == plain[1].output_hash and "expected" not in json.dumps(res[1].summary)
    assert lines[0].endswith("ran") and lines[1].endswith("cached")
    for line in lines:
        assert "1 failed (all deliberately broken, as their rows say)" in line, line
