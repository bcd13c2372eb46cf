"""Classification beyond one process on Ray (the ``scale`` extra: ``pip install '.[scale]'``).

Ray Data holds the messages whose labels are missing from the cache; ``map_batches`` scores them with an actor
pool, one scorer per GPU (``num_gpus=1``), or CPU actors where the cluster has no GPU. Results are keyed by the
message's position: a batch Ray retries after a worker died is counted once, a position that never came back is
an error, and the output keeps the input order. Batch invariance makes the labels the single-process run's,
bit for bit. The label cache stays on the driver (read before, filled after), so a rerun submits nothing.

A local cluster (no address) talks over loopback only: every Ray process binds 127.0.0.1 (Ray otherwise
resolves "127.0.0.1" to the machine's own address), no dashboard, no usage reporting, no metrics export.
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

import numpy as np

from swe_taskflow.errors import ConfigError, ModelError
from swe_taskflow.taxonomy import INTENTS

from .base import Classifier, Prediction

#: set before Ray starts a local cluster; its processes inherit them
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",   # node address = 127.0.0.1, not the host's own
                "RAY_USAGE_STATS_ENABLED": "0", "RAY_enable_metrics_collection": "0"}


def connect(address: str | None = None, *, num_cpus: int | None = None):
    """The ``ray`` module, joined to ``address`` (``auto``, ``host:port``, ``ray://...``) or, without one, to a
    new local cluster bound to loopback. A session already connected is kept."""
    os.environ.update(LOOPBACK_ENV) if address in (None, "local") else None
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ConfigError("--ray needs Ray", hint="pip install '.[scale]'") from None
    if ray.is_initialized():
        return ray
    if address in (None, "local"):
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False   # in case ray was imported before the environment was set
        ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                 configure_logging=False)
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    return ray


class _Scorer:
    """One Ray Data actor: builds its classifier once, then scores batches of {"i", "text"}."""

    def __init__(self, factory: Callable[[], Classifier], threads: int):
        try:
            import torch

            torch.set_num_threads(max(1, threads))
        except ImportError:
            pass
        self.classifier = factory()

    def __call__(self, batch: dict) -> dict:
        preds = self.classifier.predict([str(t) for t in batch["text"]])
        return {"i": batch["i"], "intent": np.array([p.intent for p in preds]),
                "confidence": np.array([p.confidence for p in preds], dtype=np.float64),
                "probs": np.array([[(p.probs or {}).get(k, np.nan) for k in INTENTS] for p in preds])}


def label_with_ray(texts: Sequence[str], factory: Callable[[], Classifier], *, batch_size: int = 64,
                   actors: int | None = None) -> list[Prediction]:
    """Predictions for ``texts`` in order, scored on the connected cluster by ``actors`` scorers (default: one
    per GPU, else one per CPU). ``factory`` builds a scorer's classifier (picklable: it runs on the workers)."""
    import ray

    if not texts:
        return []
    res = ray.cluster_resources()
    gpus, cpus = int(res.get("GPU", 0)), int(res.get("CPU", 1))
    n = actors or gpus or max(1, cpus)
    per = {"num_gpus": 1} if gpus else {"num_cpus": max(1, cpus // n)}
    ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
    # An actor pool restarts dead actors and retries their batches without limit by default (Ray Data 2.60:
    # max_restarts = max_task_retries = -1); passing them again is deprecated.
    scored = ds.map_batches(_Scorer, fn_constructor_args=(factory, per.get("num_cpus", 1)), batch_size=batch_size,
                            batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=n), **per)
    got: dict[int, Prediction] = {}
    for b in scored.iter_batches(batch_format="numpy", batch_size=None):
        for i, intent, conf, probs in zip(b["i"], b["intent"], b["confidence"], b["probs"]):
            p = None if np.isnan(probs).any() else {k: float(x) for k, x in zip(INTENTS, probs)}
            got.setdefault(int(i), Prediction(str(intent), float(conf), p))   # a retried batch counts once
    if len(got) != len(texts):
        lost = next(i for i in range(len(texts)) if i not in got)
        raise ModelError("Ray returned no label for a message", field=f"message #{lost}", actual=len(got),
                         expected=len(texts))
    return [got[i] for i in range(len(texts))]
