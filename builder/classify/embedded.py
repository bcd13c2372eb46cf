"""The CPU default: MiniLM embeddings + hand-written exemplars + deterministic rules (no GPU, no download).

Per message: a rule (:mod:`.rules`) answers when the form alone decides; otherwise the message's prose
(machine-output lines dropped) is embedded and every intent gets a score mixing
- the mean cosine similarity of its ``k`` nearest exemplars (MiniLM),
- the cosine similarity to its prototype (mean of its exemplars and its Appendix A definition),
- the mean of its ``k`` best character-n-gram TF-IDF similarities (carries terse non-English messages
  where the English-trained MiniLM is weak),
- small bonuses from multilingual cue words and from the message's form (:mod:`.lexicon`),
and a softmax over the 16 scores gives the probabilities.

``ZeroShotClassifier`` is the naive baseline the issue names: cosine similarity to the 16 definitions only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from swe_taskflow.taxonomy import DEFINITIONS, INTENT_INDEX, INTENTS

from .base import Prediction, prediction_from_scores
from .encoder import minilm_revision, shared_encoder
from .exemplars import DEFAULT_EXEMPLARS, load_exemplars
from .lexicon import LEXICON_VERSION, cue_matrix, form_matrix
from .rules import RULES_VERSION, prose_and_log, rule_label

VERSION = "1"


@dataclass(frozen=True)
class EmbeddedConfig:
    """Weights of the embedded classifier (part of its version, hence of the label cache key)."""

    k: int = 3
    """Nearest exemplars averaged per intent."""
    w_knn: float = 1.0
    """Weight of the kNN exemplar similarity (MiniLM)."""
    w_proto: float = 0.25
    """Weight of the prototype similarity (MiniLM)."""
    w_char: float = 0.5
    """Weight of the character n-gram kNN similarity."""
    w_lex: float = 0.15
    """Bonus for an intent whose multilingual cue words (:mod:`.lexicon`) occur in the message."""
    w_form: float = 0.06
    """Bonus from the message's form (:func:`.lexicon.form_matrix`): asking vs. numbered answers."""
    prior: tuple[tuple[str, float], ...] = (("bug-fix", 0.03),)
    """Additive per-intent offsets (e.g. ``(("bug-fix", 0.05),)``): real sessions are dominated by a few intents."""
    temperature: float = 0.05
    """Softmax temperature over the combined scores."""
    max_chars: int = 1200
    """Prose longer than this is cut to its first 3/4 and last 1/4 of this budget before embedding."""


def _definitions_sha256() -> str:
    return hashlib.sha256(json.dumps(dict(DEFINITIONS), sort_keys=True).encode()).hexdigest()


def _clip(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    head = budget * 3 // 4
    return text[:head] + "\n" + text[-(budget - head):]


def model_text(text: str, budget: int) -> str:
    """What the model sees: the message's prose lines (logs dropped) or, if none, the raw head."""
    prose, n_log = prose_and_log(text)
    return _clip(prose if (n_log and prose.strip()) else text.strip(), budget)


def _topk_mean(sims: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """(n, 16): mean of the k largest similarities among each intent's exemplars."""
    out = np.full((sims.shape[0], len(INTENTS)), -1.0, dtype=np.float64)
    for j in range(len(INTENTS)):
        cols = sims[:, labels == j]
        if cols.shape[1] == 0:
            continue
        kk = min(k, cols.shape[1])
        top = -np.sort(-cols, axis=1)[:, :kk]
        out[:, j] = top.mean(axis=1)
    return out


class EmbeddedClassifier:
    """The default classifier. ``predict`` is deterministic for a given input list."""

    def __init__(self, *, device: str = "cpu", batch_size: int = 64, config: EmbeddedConfig = EmbeddedConfig(),
                 exemplars_path=DEFAULT_EXEMPLARS):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.config = config
        self.encoder = shared_encoder("cpu" if device == "auto" else device, batch_size)
        ex = load_exemplars(exemplars_path)
        self._labels = np.array([INTENT_INDEX[i] for i in ex.intents])
        self._emb = self.encoder.encode(list(ex.texts))
        defs = self.encoder.encode([DEFINITIONS[i] for i in INTENTS])
        proto = np.stack([np.vstack([self._emb[self._labels == j], defs[j:j + 1]]).mean(0)
                          for j in range(len(INTENTS))])
        self._proto = proto / np.linalg.norm(proto, axis=1, keepdims=True)
        self._tfidf = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=True)
        self._char = self._tfidf.fit_transform([t.lower() for t in ex.texts])
        cfg = hashlib.sha256(json.dumps(asdict(config), sort_keys=True).encode()).hexdigest()[:8]
        self.info = {"name": "embedded", "version": f"{VERSION}+rules{RULES_VERSION}+lex{LEXICON_VERSION}+{ex.version}-{ex.sha256[:12]}+cfg-{cfg}",
                     "revision": minilm_revision(), "prompt_sha256": _definitions_sha256(),
                     "exemplars_sha256": ex.sha256}

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 16) combined scores before the softmax (rules not applied)."""
        cfg = self.config
        seen = [model_text(t, cfg.max_chars) for t in texts]
        x = self.encoder.encode(seen)
        knn = _topk_mean(x @ self._emb.T, self._labels, cfg.k)
        proto = x @ self._proto.T
        xc = self._tfidf.transform([t.lower() for t in seen])
        char = _topk_mean((xc @ self._char.T).toarray(), self._labels, cfg.k)
        lex = cfg.w_lex * cue_matrix(seen) + cfg.w_form * form_matrix(seen)
        prior = np.zeros(len(INTENTS))
        for name, v in cfg.prior:
            prior[INTENT_INDEX[name]] = v
        return cfg.w_knn * knn + cfg.w_proto * proto + cfg.w_char * char + lex + prior

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        texts = list(texts)
        out: list[Prediction | None] = [None] * len(texts)
        todo = []
        for i, t in enumerate(texts):
            lab = rule_label(t)
            if lab is None:
                todo.append(i)
            else:
                out[i] = Prediction(lab, 1.0, {x: float(x == lab) for x in INTENTS})
        if todo:
            s = self.scores([texts[i] for i in todo]) / self.config.temperature
            for i, row in zip(todo, s):
                out[i] = prediction_from_scores(row)
        return out  # type: ignore[return-value]


class ZeroShotClassifier:
    """Naive baseline: the nearest of the 16 Appendix A definitions by MiniLM cosine similarity."""

    def __init__(self, *, device: str = "cpu", batch_size: int = 64, temperature: float = 0.05):
        self.encoder = shared_encoder("cpu" if device == "auto" else device, batch_size)
        self._defs = self.encoder.encode([f"{i}: {DEFINITIONS[i]}" for i in INTENTS])
        self.temperature = temperature
        self.info = {"name": "zero-shot", "version": "1", "revision": minilm_revision(),
                     "prompt_sha256": _definitions_sha256()}

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        s = self.encoder.encode([t[:2000] for t in texts]) @ self._defs.T / self.temperature
        return [prediction_from_scores(row) for row in s]
