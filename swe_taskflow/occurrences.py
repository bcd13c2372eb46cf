"""Which of many strings occur verbatim in a text, in one pass over the text (token-level Aho-Corasick).

The split checks ask, for thousands of artifacts at once, whether each appears in a text "not glued to
a longer word": an artifact starting (ending) with a word character must start (end) at a word
boundary. Over whitespace-normalized text that rule is exactly "the artifact's token sequence occurs
in the text's token sequence", with tokens = maximal runs of ``[\\w$]`` and single other characters.
One automaton over the patterns' tokens and one scan of the text answer every pattern in time linear
in the text plus the patterns (a regex search per artifact was quadratic in the issue length).
Numbers carry two extra rules (``1.2`` is not ``1``, ``$6`` is not ``6``) checked at each match.
"""

from __future__ import annotations

import re
from collections import deque
from itertools import accumulate
from typing import Iterable, Sequence

_TOKEN = re.compile(r"[\w$]+|[^\w$]")
_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Collapse whitespace so that re-wrapping a line never counts as a change."""
    return _WS.sub(" ", text).strip()


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def occurring(patterns: Iterable[str], text: str, *, numbers: Sequence[bool] | None = None) -> set[str]:
    """The patterns (each already normalized) that occur in ``normalize(text)`` on token boundaries.

    ``numbers[k]`` marks pattern k as a number: it must also not follow ``[\\w$.]`` nor precede a word
    character or ``.<digit>``. An empty pattern always occurs.
    """
    pats = list(patterns)
    flags = list(numbers) if numbers is not None else [False] * len(pats)
    found: set[str] = {p for p in pats if not p}
    uniq: dict[str, bool] = {}
    for p, is_num in zip(pats, flags):
        if p and p not in found:
            uniq[p] = uniq.get(p, False) or is_num
    if not uniq:
        return found
    ids: dict[str, int] = {}     # token -> id, over the patterns' tokens
    keys = list(uniq)
    auto = _Automaton([[ids.setdefault(t, len(ids)) for t in _TOKEN.findall(p)] for p in keys])
    norm = normalize(text)
    words = _TOKEN.findall(norm)
    tokens = [ids.get(t, -1) for t in words]
    ends: list[int] = []     # character offset after each token, computed on the first number match
    need_check = [uniq[k] for k in keys]

    def number_ok(k: int, last: int) -> bool:
        if not ends:
            ends.extend(accumulate(map(len, words)))
        first = last - auto.length[k] + 1
        start, end = ends[first] - len(words[first]), ends[last]
        if start > 0 and (_is_word(norm[start - 1]) or norm[start - 1] == "."):
            return False
        if end < len(norm) and (_is_word(norm[end]) or (norm[end] == "." and norm[end + 1:end + 2].isdigit())):
            return False
        return True

    hits = auto.scan(tokens, lambda k, i: not need_check[k] or number_ok(k, i))
    return found | {keys[k] for k in hits}


class _Automaton:
    """Aho-Corasick over token ids; ``scan`` reports each pattern once, at its first accepted match."""

    def __init__(self, patterns: list[list[int]]) -> None:
        goto: list[dict[int, int]] = [{}]
        out: list[int] = [-1]
        self.length: list[int] = [len(p) for p in patterns]
        for k, toks in enumerate(patterns):
            node = 0
            for t in toks:
                nxt = goto[node].get(t)
                if nxt is None:
                    nxt = len(goto)
                    goto[node][t] = nxt
                    goto.append({})
                    out.append(-1)
                node = nxt
            out[node] = k   # patterns are distinct, so one per node
        fail = [0] * len(goto)
        link = [-1] * len(goto)   # nearest proper suffix node that ends a pattern
        queue = deque(goto[0].values())
        while queue:
            node = queue.popleft()
            for t, child in goto[node].items():
                f = fail[node]
                while f and t not in goto[f]:
                    f = fail[f]
                fc = goto[f].get(t, 0) if node else 0
                fail[child] = fc
                link[child] = fc if out[fc] >= 0 else link[fc]
                queue.append(child)
        self.goto, self.out, self.fail, self.link = goto, out, fail, link

    def scan(self, tokens: Sequence[int], accept) -> set[int]:
        goto, out, fail, link = self.goto, self.out, self.fail, self.link
        done: set[int] = set()
        total = sum(1 for k in out if k >= 0)
        node = 0
        for i, t in enumerate(tokens):
            while node and t not in goto[node]:
                node = fail[node]
            node = goto[node].get(t, 0)
            m = node if out[node] >= 0 else link[node]
            while m > 0:
                k = out[m]
                if k not in done and accept(k, i):
                    done.add(k)
                m = link[m]
            if len(done) == total:
                break
        return done


__all__ = ["occurring", "normalize"]
