"""Measure fine-tuning MiniLM's top layers as the embedded classifier's learner, by the grouped cross-validation.

A candidate for the general head, measured only: the top layers trained together with a linear head over
[pooled embedding, the other feature blocks], scored by the same cross-validation grouped by repository as the
shipped heads (:mod:`tools.grouped_cv`, the rows of :func:`tools.train_heads.general_data`, rules and the issue
head deciding first). Nothing is written but the figure.

The lower layers are frozen, so their outputs are computed once per message; only the top ``--top`` layers,
copied from MiniLM for each fold, and the head are trained (AdamW, ``--epochs`` passes, batches of 32 drawn by a
seeded ``numpy.random.Generator``; the head starts at zero). Exemplars and ``low`` rows take part as in the
shipped head, at its weights. One fold costs about ``--epochs`` passes of MiniLM over the fold's rows, forward
and back.
``--top 6`` trains every layer (the word embeddings stay frozen).

    python -m tools.finetune_cv [--top 2] [--epochs 3] [--lr 3e-5] [--max-tokens 128] [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import numpy as np

from tools.shared_data import check_default, run_main
from tools.train_heads import DEFAULT_RESERVED, DEFAULT_SESSIONS, GENERAL

#: learning rate of the head (the encoder's is ``--lr``)
HEAD_LR = 3e-3
BATCH = 32
SEED = 0


def lower_states(encoder, texts: list[str], top: int, max_tokens: int) -> list:
    """Each text's token states below the top ``top`` layers (frozen: computed once)."""
    import torch

    tok, model = encoder.tokenizer, encoder.model
    below = model.config.num_hidden_layers - top
    out: list = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    with torch.inference_mode():
        for s in range(0, len(order), 64):
            idx = order[s:s + 64]
            enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=max_tokens,
                      return_tensors="pt")
            hidden = model(**enc, output_hidden_states=True).hidden_states[below]
            for j, i in enumerate(idx):
                out[i] = hidden[j, :int(enc["attention_mask"][j].sum())].clone()
    return out


def make_net(model, top: int, n_features: int, n_classes: int):
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            n = model.config.num_hidden_layers
            self.layers = copy.deepcopy(model.encoder.layer[n - top:])
            self.head = torch.nn.Linear(model.config.hidden_size + n_features, n_classes)
            torch.nn.init.zeros_(self.head.weight)
            torch.nn.init.zeros_(self.head.bias)

        def forward(self, states: list, features):
            n = max(h.shape[0] for h in states)
            x = torch.zeros(len(states), n, states[0].shape[1])
            mask = torch.zeros(len(states), n)
            for j, h in enumerate(states):
                x[j, :h.shape[0]], mask[j, :h.shape[0]] = h, 1
            additive = (1.0 - mask[:, None, None, :]) * torch.finfo(torch.float32).min
            for layer in self.layers:
                o = layer(x, attention_mask=additive)
                x = o[0] if isinstance(o, tuple) else o
            pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            pooled = torch.nn.functional.normalize(pooled, dim=1)
            return self.head(torch.cat([pooled, features], 1))

    return Net()


def measure(top: int = 2, epochs: int = 3, lr: float = 3e-5, max_tokens: int = 128, threads: int = 2,
            sessions=DEFAULT_SESSIONS, reserved=DEFAULT_RESERVED) -> dict:
    import torch

    from builder.classify.embedded import EmbeddedClassifier, load_heads
    from tools.grouped_cv import agreement, cross_validate
    from tools.train_heads import general_data

    torch.set_num_threads(threads)
    t0 = time.time()
    clf = EmbeddedClassifier()
    data = general_data(clf, sessions, reserved, load_heads().issue)
    texts = data.seen + list(clf.exemplars.texts)
    n_dev = len(data.seen)
    if [b for b, _ in data.widths][-1] != "emb":
        raise AssertionError("general_data's blocks changed: update tools/finetune_cv.py")
    other = sum(w for b, w in data.widths if b != "emb")
    x, y, w = data.rows(np.arange(n_dev), GENERAL)   # every development row, then the exemplars, as weighed
    features = torch.from_numpy(x[:, :other].astype(np.float32))
    classes = sorted(set(y))
    target = torch.tensor([classes.index(c) for c in y])
    weight = torch.from_numpy(w.astype(np.float32))
    states = lower_states(clf.encoder, texts, top, max_tokens)
    print(f"features and lower layers: {time.time() - t0:.0f} s", flush=True)

    def fit_predict(train: np.ndarray, test: np.ndarray) -> list[str]:
        rng = np.random.default_rng(SEED)
        rows = np.r_[train, np.arange(n_dev, len(texts))]
        net = make_net(clf.encoder.model, top, other, len(classes))
        opt = torch.optim.AdamW([{"params": net.layers.parameters(), "lr": lr},
                                 {"params": net.head.parameters(), "lr": HEAD_LR}], weight_decay=0.01)
        for epoch in range(epochs):
            net.train()
            total = 0.0
            for batch in np.array_split(rng.permutation(rows), max(1, len(rows) // BATCH)):
                b = torch.from_numpy(batch)
                loss = (torch.nn.functional.cross_entropy(net([states[i] for i in batch], features[b]),
                                                          target[b], reduction="none") * weight[b]).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item() * len(batch)
            print(f"  epoch {epoch + 1}/{epochs}: loss {total / len(rows):.3f} ({time.time() - t0:.0f} s)",
                  flush=True)
        net.eval()
        pred: list[str] = []
        with torch.no_grad():
            for batch in np.array_split(test, max(1, len(test) // 64)):
                pred += [classes[k] for k in net([states[i] for i in batch], features[batch]).argmax(1).tolist()]
        return [f or p for f, p in zip((data.fixed[i] for i in test), pred)]

    pred = cross_validate(data.repos, fit_predict)
    return {"top": top, "epochs": epochs, "lr": lr, "max_tokens": max_tokens,
            "grouped_cv": agreement(data.y, pred, data.confidence), "seconds": round(time.time() - t0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=2, help="MiniLM layers trained (of 6)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-5, help="learning rate of the encoder layers")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--reserved", type=Path, default=DEFAULT_RESERVED)
    args = ap.parse_args(argv)
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    check_default(args.reserved, DEFAULT_RESERVED, "--reserved")
    print(json.dumps(measure(args.top, args.epochs, args.lr, args.max_tokens, args.threads, args.sessions,
                             args.reserved), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main, "finetune_cv"))
