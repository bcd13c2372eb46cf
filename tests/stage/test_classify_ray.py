"""`swe-taskflow classify --ray` on a local Ray cluster (2 CPUs, loopback only) with the tiny random LM:
the single-process labels, the label cache around it, a worker killed mid-run, bad inputs, and the addresses
the cluster listens on. Sessions are hand-written."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="needs the `scale` extra: pip install '.[scale]'")

from tests.support.tiny_lm import build_tiny_lm  # noqa: E402

from builder.classify import load_classifier  # noqa: E402
from builder.classify.scale import connect, label_with_ray  # noqa: E402
from builder.cli import main  # noqa: E402

pytestmark = pytest.mark.slow

# provenance: hand-written for this test
SESSIONS = [{"session_id": f"s{k}", "messages": [{"text": t} for t in texts]} for k, texts in enumerate([
    ["add a logout button to the header", "run the tests", "thanks!"],
    ["KeyError: 'id'\n  File \"a.py\", line 3, in f", "продолжай"],
    ["how does the cache work?", "commit and push", "write unit tests for the parser", "ok"],
    ["plan the migration to postgres"],
])]


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():
        ray.shutdown()
    connect(None, num_cpus=2)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture()
def sessions(tmp_path) -> Path:
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps(s) + "\n" for s in SESSIONS), encoding="utf-8")
    return p


def _ray_pids() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


def test_the_local_cluster_is_on_loopback_only(cluster):
    import ipaddress

    import psutil

    nodes = ray.nodes()
    assert nodes and all(n["NodeManagerAddress"] == "127.0.0.1" for n in nodes)
    assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")
    pids = _ray_pids() | {os.getpid()}
    listening = [c.laddr for c in psutil.net_connections(kind="inet") if c.status == "LISTEN" and c.pid in pids]
    assert listening   # the GCS and raylet at least
    for addr in listening:
        ip = ipaddress.ip_address(addr.ip)
        ip = ip.ipv4_mapped or ip if ip.version == 6 else ip
        assert ip.is_loopback, f"a Ray process listens on {addr.ip}:{addr.port}"


def test_ray_labels_equal_the_single_process_run_and_the_cache_makes_reruns_free(cluster, tiny, sessions, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setenv("SWE_TASKFLOW_CACHE", str(tmp_path / "cache"))
    one, many = tmp_path / "one.jsonl", tmp_path / "ray.jsonl"
    args = ["--classifier", str(tiny), "--device", "cpu", "--batch-size", "2", "--quiet"]
    assert main(["classify", str(sessions), "--out", str(one), "--no-cache", *args]) == 0
    assert main(["classify", str(sessions), "--out", str(many), "--ray", *args]) == 0
    assert many.read_bytes() == one.read_bytes()   # same labels and confidences, same order, bit for bit

    import builder.classify.scale as scale

    monkeypatch.setattr(scale, "label_with_ray", lambda *a, **k: pytest.fail("a cached rerun submitted work"))
    again = tmp_path / "again.jsonl"
    assert main(["classify", str(sessions), "--out", str(again), "--ray", *args]) == 0
    assert again.read_bytes() == one.read_bytes()


def _dies_once(marker: str, folder: str):
    """A scorer whose first copy kills its own worker process on its first batch (Ray restarts it)."""
    clf = load_classifier(folder, device="cpu", batch_size=2)
    predict = clf.predict

    def once(texts):
        if not os.path.exists(marker):
            Path(marker).write_text("died", encoding="utf-8")
            os._exit(1)
        return predict(texts)

    clf.predict = once
    return clf


def test_a_killed_worker_is_retried_and_no_message_is_lost_or_doubled(cluster, tiny, tmp_path):
    import sys

    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])   # the workers cannot import this test module
    texts = [m["text"] for s in SESSIONS for m in s["messages"]] * 2
    marker = tmp_path / "died"
    got = label_with_ray(texts, partial(_dies_once, str(marker), str(tiny)), batch_size=3, actors=2)
    assert marker.exists()   # a worker did die
    want = load_classifier(str(tiny), device="cpu", batch_size=2).predict(texts)
    assert len(got) == len(texts) and got == want


@pytest.mark.parametrize("content,needle", [("", "no session"), ('{"session_id": "a", "messages": [{"txt": 1}]}\n',
                                                                  "text")])
def test_empty_and_malformed_inputs_are_one_line_errors_and_write_nothing(cluster, tiny, tmp_path, capsys, content,
                                                                         needle):
    bad, out = tmp_path / "bad.jsonl", tmp_path / "out.jsonl"
    bad.write_text(content, encoding="utf-8")
    assert main(["classify", str(bad), "--out", str(out), "--classifier", str(tiny), "--ray", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert needle in err and str(bad) in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
