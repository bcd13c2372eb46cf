"""Per-test results from unittest -v output (hand-written outputs in each Python's format) and the grade."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from swe_taskflow import testlog
from swe_taskflow.testlog import grade, parse_unittest

PY311 = """\
test_a (tests.test_x.ATests.test_a) ... ok
test_b (tests.test_x.ATests.test_b) ... FAIL
test_c (tests.test_x.ATests.test_c) ... ERROR
test_d (tests.sub.test_y.BTests.test_d) ... skipped 'no network'
test_e (tests.test_x.ATests.test_e) ... expected failure
test_f (tests.test_x.ATests.test_f) ... unexpected success
test_g (tests.test_x.ATests.test_g)
A docstring's first line ... ok
test_broken (unittest.loader._FailedTest.test_broken) ... ERROR

======================================================================
FAIL: test_b (tests.test_x.ATests.test_b)
----------------------------------------------------------------------
AssertionError: 1 != 2 ... ok
"""
PY310 = "test_a (tests.test_x.ATests) ... ok\ntest_b (tests.test_x.ATests) ... FAIL\n"


def test_every_status_and_both_name_formats():
    got = parse_unittest(PY311)
    assert got == {"tests/test_x.py::ATests::test_a": "passed", "tests/test_x.py::ATests::test_b": "failed",
                   "tests/test_x.py::ATests::test_c": "error", "tests/sub/test_y.py::BTests::test_d": "skipped",
                   "tests/test_x.py::ATests::test_e": "passed", "tests/test_x.py::ATests::test_f": "failed",
                   "tests/test_x.py::ATests::test_g": "passed"}
    # the same tests, Python <= 3.10 spelling (no method in the parentheses)
    assert parse_unittest(PY310) == {"tests/test_x.py::ATests::test_a": "passed",
                                     "tests/test_x.py::ATests::test_b": "failed"}


def test_grade_counts_missing_tests_as_not_passed():
    results = parse_unittest(PY311)
    g = grade(results, ["tests/test_x.py::ATests::test_a", "tests/test_x.py::ATests::gone"],
              ["tests/test_x.py::ATests::test_g"])
    assert not g["resolved"]
    assert g["fail_to_pass"]["not_passed"] == {"tests/test_x.py::ATests::gone": "missing"}
    assert grade(results, ["tests/test_x.py::ATests::test_a"], ["tests/test_x.py::ATests::test_g"])["resolved"]


def test_runs_as_a_standalone_file(tmp_path):
    """A verifier copies this one file into an image and runs it with the image's python3."""
    (tmp_path / "f2p.json").write_text(json.dumps(["tests/test_x.py::ATests::test_a"]))
    (tmp_path / "p2p.json").write_text(json.dumps(["tests/test_x.py::ATests::test_b"]))
    proc = subprocess.run([sys.executable, "-I", str(Path(testlog.__file__)), str(tmp_path / "f2p.json"),
                           str(tmp_path / "p2p.json")], input=PY311, capture_output=True, text=True, cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["resolved"] is False
    assert out["pass_to_pass"]["not_passed"] == {"tests/test_x.py::ATests::test_b": "failed"}
