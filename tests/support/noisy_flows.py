"""Synthetic corpora with KNOWN true labels, read through a KNOWN confusion (tests of ``flow measure --confusion``).

True sessions come from a known first-order chain of the 16 intents (start, transitions with persistence, an
end probability; excluded labels included, so errors move messages in and out of the transitions); each
message's predicted label is drawn from ``M[true]`` of a classifier of about 75% accuracy that makes the
issue's errors (bug-fix <-> debug, planning <-> new-feature, ...). A labelled sample (reader = truth,
classifier = predicted) is drawn the same way from fresh sessions, as held-out labels are. Everything comes from
one seeded ``numpy.random.Generator``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from swe_taskflow.taxonomy import INTENTS, RETAINED_POSITION

K = len(INTENTS)
_IDX = {n: i for i, n in enumerate(INTENTS)}
#: The confusions a ~75% classifier makes (true -> predicted), each taking half of the row's error mass.
PAIRS = (("bug-fix", "debug"), ("debug", "bug-fix"), ("planning", "new-feature"), ("new-feature", "planning"),
         ("explain", "question"), ("question", "explain"), ("other", "question"), ("meta-question", "question"),
         ("greeting", "other"), ("tests", "execute"), ("refactor", "new-feature"), ("code-review", "explain"))
#: Rough weight of each intent in the chain (INTENTS order): bug-fix and new-feature dominate, as in chat.
_BASE = np.array([2, 6, 5, 1, 1, .5, 2, 2, 1.5, 1.5, .6, 1, 1.5, .3, 1.2, 1.5])


def classifier_matrix(accuracy: float = 0.75) -> np.ndarray:
    """``M[true, predicted]``: ``accuracy`` on the diagonal, half the error to the row's partner in PAIRS (or
    the diagonal when it has none), half spread evenly."""
    m = np.full((K, K), (1 - accuracy) * 0.5 / (K - 1))
    np.fill_diagonal(m, accuracy)
    partner = dict(PAIRS)
    for i, name in enumerate(INTENTS):
        m[i, _IDX.get(partner.get(name, name))] += (1 - accuracy) * 0.5
    return m / m.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class TrueChain:
    start: np.ndarray   # (16,)
    step: np.ndarray    # (16, 17): next intent, or END in the last column

    @staticmethod
    def draw(rng: np.random.Generator) -> "TrueChain":
        start = rng.dirichlet(_BASE * 2)
        step = np.stack([rng.dirichlet(np.append(_BASE + 4.0 * (np.arange(K) == i), 5.0) * 2) for i in range(K)])
        return TrueChain(start, step)

    def shares(self) -> np.ndarray:
        """The population's retained intent shares (expected visits per session: start @ (I - T)^-1)."""
        visits = self.start @ np.linalg.inv(np.eye(K) - self.step[:, :K])
        r = visits[RETAINED_POSITION >= 0]
        return r / r.sum()

    def sessions(self, rng: np.random.Generator, n: int, max_len: int = 80) -> tuple[np.ndarray, np.ndarray]:
        """``n`` sessions as (codes, lengths), all drawn at once step by step."""
        cur = np.minimum(np.searchsorted(np.cumsum(self.start), rng.random(n)), K - 1)
        cum = np.cumsum(self.step, axis=1)
        cols, alive = [cur], np.arange(n)
        lengths = np.ones(n, dtype=np.int64)
        for _ in range(max_len - 1):
            nxt = np.minimum((cum[cur] < rng.random(cur.size)[:, None]).sum(axis=1), K)
            keep = nxt < K
            alive, cur = alive[keep], nxt[keep]
            if not alive.size:
                break
            lengths[alive] += 1
            col = np.full(n, -1)
            col[alive] = cur
            cols.append(col)
        grid = np.stack(cols, axis=1)                          # (n, longest), -1 after a session's end
        return grid[grid >= 0], lengths


def corrupt(rng: np.random.Generator, codes: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Each code replaced by a draw from ``m[code]``."""
    return np.minimum((np.cumsum(m, axis=1)[codes] < rng.random(codes.size)[:, None]).sum(axis=1), K - 1)


@dataclass(frozen=True)
class NoisyCorpus:
    chain: TrueChain
    true_codes: np.ndarray
    predicted: np.ndarray
    lengths: np.ndarray
    labelled_true: np.ndarray
    labelled_predicted: np.ndarray

    @staticmethod
    def draw(seed: int, *, sessions: int = 1500, labelled: int = 2500, accuracy: float = 0.75) -> "NoisyCorpus":
        rng = np.random.default_rng(seed)
        m = classifier_matrix(accuracy)
        chain = TrueChain.draw(rng)
        codes, lengths = chain.sessions(rng, sessions)
        predicted = corrupt(rng, codes, m)
        held_out, _ = chain.sessions(rng, labelled)
        held_out = held_out[:labelled]
        return NoisyCorpus(chain, codes, predicted, lengths, held_out, corrupt(rng, held_out, m))

    def confusion_counts(self) -> np.ndarray:
        c = np.zeros((K, K), dtype=np.int64)
        np.add.at(c, (self.labelled_true, self.labelled_predicted), 1)
        return c

    def write(self, folder: Path) -> tuple[Path, Path, Path]:
        """``sessions.jsonl`` (predicted labels), ``reader.jsonl`` and ``classifier.jsonl`` (the labelled sample,
        one message per session, texts ``[synthetic] ...``)."""
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / "sessions.jsonl", folder / "reader.jsonl", folder / "classifier.jsonl"
        ends = np.cumsum(self.lengths)
        with out[0].open("w", encoding="utf-8") as fh:
            for i, (lo, hi) in enumerate(zip(ends - self.lengths, ends)):
                fh.write(json.dumps({"session_id": f"s{i}", "repo": f"r/{i % 7}", "messages": [
                    {"text": f"[synthetic] {i}.{j}", "intent": INTENTS[c]}
                    for j, c in enumerate(self.predicted[lo:hi])]}) + "\n")
        for path, labels in ((out[1], self.labelled_true), (out[2], self.labelled_predicted)):
            with path.open("w", encoding="utf-8") as fh:
                for i, c in enumerate(labels):
                    fh.write(json.dumps({"session_id": f"h{i}", "messages": [
                        {"text": f"[synthetic] held-out {i}", "intent": INTENTS[c]}]}) + "\n")
        return out
