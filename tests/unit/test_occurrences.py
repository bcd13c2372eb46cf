"""The one-pass matcher behind the split checks against an independent brute force (one regex per pattern)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from swe_taskflow.occurrences import normalize, occurring
from swe_taskflow.split_checks import _NUMBER

ALPHABET = list("ab1_$.-/ ( )\n:x9") + ["é", "`"]


def brute(pattern: str, text: str, number: bool) -> bool:
    """The rule as the split checks first wrote it: a regex search with word-boundary lookarounds."""
    a = normalize(pattern)
    if not a:
        return True
    start = r"(?<![\w$])" if (a[0].isalnum() or a[0] in "_$") else ""
    end = r"(?![\w$])" if (a[-1].isalnum() or a[-1] in "_$") else ""
    if number:
        start, end = r"(?<![\w$.])", r"(?![\w$]|\.\d)"
    return re.search(start + re.escape(a) + end, normalize(text)) is not None


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_regex_definition_on_random_text(seed):
    rng = np.random.default_rng(seed)
    text = "".join(rng.choice(ALPHABET, size=int(rng.integers(0, 300))))
    pats = []
    for _ in range(60):   # substrings of the text (often present) and random strings (often absent)
        if text and rng.random() < 0.7:
            i = int(rng.integers(0, len(text)))
            pats.append(normalize(text[i:i + int(rng.integers(1, 12))]))
        else:
            pats.append(normalize("".join(rng.choice(ALPHABET, size=int(rng.integers(1, 6))))))
    numbers = [_NUMBER.fullmatch(p) is not None for p in pats]
    got = occurring(pats, text, numbers=numbers)
    for p, is_num in zip(pats, numbers):
        assert (p in got) == brute(p, text, is_num), (p, text)


def test_number_rules():
    assert occurring(["1"], "v 1.2", numbers=[True]) == set()        # 1.2 is not 1
    assert occurring(["6"], "costs $6 now", numbers=[True]) == set()  # $6 is not 6
    assert occurring(["1.2"], "ver 1.2.", numbers=[True]) == {"1.2"}  # a sentence end is not a digit
    assert occurring(["1"], "x1 and 1", numbers=[True]) == {"1"}
    assert occurring(["-1"], "x-1", numbers=[True]) == set()


def test_word_boundaries():
    assert occurring(["foo"], "foobar") == set()
    assert occurring(["foo.bar"], "x.foo.bar()") == {"foo.bar"}
    assert occurring(["a b"], "a\n\n  b") == {"a b"}     # re-wrapping never counts as a change
    assert occurring(["", "zz"], "text") == {""}

