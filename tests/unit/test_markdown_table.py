"""The one Markdown table writer (swe_taskflow.markdown.table): the exact lines every table in the
card, the gap tables and the build report is made of (the card's bytes are release content)."""

from __future__ import annotations

import pytest

from swe_taskflow.markdown import table


def test_default_alignment_is_first_left_rest_right():
    assert table(["split", "rows", "TFAS"], [("a", 3, 61.25), ["b", 0, "-"]]) == [
        "| split | rows | TFAS |", "|---|---:|---:|", "| a | 3 | 61.25 |", "| b | 0 | - |"]


def test_explicit_alignment_and_no_rows():
    assert table(["config", "split", "rows"], [], "llr") == ["| config | split | rows |", "|---|---|---:|"]
    assert table(["k", "v"], iter([("x", None)]), "rl")[1:] == ["|---:|---|", "| x | None |"]


@pytest.mark.parametrize("align", ["l", "lrr", "lc"])
def test_alignment_must_name_each_column_l_or_r(align):
    with pytest.raises(ValueError, match="one of l/r per column"):
        table(["a", "b"], [], align)
