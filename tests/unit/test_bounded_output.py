"""A Harbor command's output kept bounded on the host (issue 32): its head and tail, and what was dropped."""

from __future__ import annotations

import pytest

from swe_taskflow_harbor.bounded_output import HeadTail


def test_short_output_is_kept_whole():
    kept = HeadTail(100)
    for chunk in (b"abc", b"", b"def\n"):
        kept.feed(chunk)
    assert kept.text() == "abcdef\n" and kept.dropped == 0 and kept.total == 7


def test_long_output_keeps_head_and_tail_and_says_how_much_was_dropped():
    kept = HeadTail(1000)
    kept.feed(b"START")
    for _ in range(10_000):
        kept.feed(b"x" * 997)
    kept.feed(b"END")
    text = kept.text()
    assert text.startswith("START") and text.endswith("END")
    assert len(kept.head) == 500 and len(kept.tail) == 500 and kept.total == 5 + 9_970_000 + 3
    assert f"{kept.total - 1000} bytes of output dropped here (of {kept.total})" in text
    assert sum(len(c) for c in kept._tail) < 500 + 997 * 2   # whole chunks past the tail are let go


@pytest.mark.parametrize("cap", [2, 3, 7, 64])
def test_every_cap_keeps_exactly_cap_bytes_of_a_long_stream(cap):
    kept = HeadTail(cap)
    data = bytes(range(256)) * 5
    for i in range(0, len(data), 13):
        kept.feed(data[i:i + 13])
    assert bytes(kept.head) == data[: cap // 2] and kept.tail == data[len(data) - (cap - cap // 2):]
    assert kept.dropped == len(data) - cap


def test_the_environment_refuses_a_cap_that_is_not_a_number():
    with pytest.raises(ValueError):
        HeadTail(1)
