"""benchmarks/split_check_bench.py extrapolates the old quadratic split checks' time to 1 MB: the fit keeps
both coefficients non-negative, so noisy timings never give a negative time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("split_check_bench", ROOT / "benchmarks" / "split_check_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MB = 1 << 20


def test_exact_quadratic_timings_are_extrapolated_exactly(bench):
    a, b = 1.5e-10, 4e-6
    points = [(n, a * n * n + b * n) for n in (16_000, 33_000, 66_000, 131_000)]
    assert bench.fit_quadratic(points, MB) == pytest.approx(a * MB * MB + b * MB, rel=1e-6)


def test_timings_that_bend_an_unconstrained_fit_below_zero_give_no_negative_time(bench):
    # the "before, verbatim" timings measured on the bundled fallback text (seconds at 17, 32, 65, 129 KB),
    # for which an unconstrained a*n^2 + b*n fit extrapolated -28 s to 1 MB
    points = [(17_400, 0.17), (33_200, 0.48), (66_500, 0.35), (132_100, 0.71)]
    got = bench.fit_quadratic(points, MB)
    assert got >= 0
    # the best non-negative fit here is linear: about 5.4 us/byte over the four sizes
    assert got == pytest.approx(sum(t * n for n, t in points) / sum(n * n for n, _ in points) * MB, rel=1e-6)
