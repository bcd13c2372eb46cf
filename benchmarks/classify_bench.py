"""Throughput of the classifiers: the embedded default on CPU, and LLM label scoring (msg/s at two batch sizes,
useful-FLOP share of the GPU's dense bf16 peak, prefix-reuse speed-up, the CLI's time against the scorer's own on
the same messages, the batch-invariance check), and Ray's local scaling (1 vs 2 actors).

    python benchmarks/classify_bench.py [--n 512] [--llm-n 64] [--batch-size 16 --batch-size 64] [--device auto]
                                        [--classifier embedded ...] [--no-llm] [--no-embedded] [--ray]

LLM shapes: on CUDA three random-weight Llama-shaped models built from configs (~1.2 B, ~7.5 B, ~31.9 B; no
weights are downloaded), bf16, a 65,536-token vocabulary; on CPU one 3 M-parameter model (``--shape`` picks).
"Useful" FLOPs count 2 x parameters x the tokens each message needs (message + suffix + packed label tokens; the
prefix once per scorer). Messages are hand-written and varied.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# provenance: hand-written for this benchmark
BASE = ["fix the crash when the cart is empty", "run the tests", "thanks!", "продолжай", "添加一个导出按钮",
        "how does the session refresh work in our code?", "add a dark mode toggle to the settings page",
        "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nKeyError: 'id'",
        "aggiungi un filtro per data nella tabella ordini", "write tests for the invoice service",
        "plan the migration to postgres", "commit and push", "why is the build so slow?",
        "a página não carrega depois do login"]

# provenance: hand-written issue reports (the form of a SWE-Bench Pro prompt) for this benchmark
ISSUES = [
    "## Title\nExport fails when the invoice has no customer\n\n### Description\nExporting an invoice without a "
    "customer raises a KeyError and the export stops.\n\n### Steps to reproduce\n1. Create an invoice without a "
    "customer.\n2. Click Export.\n\n### Expected behavior\nThe export completes and leaves the customer empty.\n\n"
    "### Actual behavior\nA KeyError is raised.\n\nRequirements:\n- Exporting must not fail when the customer is "
    "missing.\n\nNew interfaces introduced:\nNo new interfaces are introduced.",
    "# Support CSV import of price lists\n\n## Description\nAdministrators can only enter prices one by one. Bulk "
    "changes take hours and are error-prone.\n\n## Expected behavior\nA new `import-prices` command reads a CSV "
    "file with product code and price and updates every listed product, reporting rows it could not apply.\n\n"
    "Requirements:\n- The command must accept a path to a CSV file.\n\nNew interfaces introduced:\n"
    "Function: import_prices(path: str) -> ImportReport",
    "## Title: Consolidate duplicated date parsing helpers\n\n### Description\nThree modules carry their own copy of "
    "the same date parsing logic, which drifted apart over time.\n\n### Expected behavior\nOne helper in "
    "`utils/dates.py` is used everywhere; behavior is unchanged.\n\nRequirements:\n- Keep the public behavior.\n\n"
    "New interfaces introduced:\nFunction: parse_date(text: str) -> date",
]

#: alternating scorer / CLI runs on CPU
ROUNDS = 5

# Dense bf16 peak (no sparsity), TFLOP/s, by device-name substring.
PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0, "L4": 121.0,
                    "4090": 165.0, "3090": 71.0, "V100": 125.0, "T4": 65.0}

# Llama-shaped configs (parameters counted with a 65,536-token vocabulary, untied head)
SHAPES = {
    "1.2B": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                 num_key_value_heads=8, vocab_size=65536),
    "7.5B": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                 num_key_value_heads=8, vocab_size=65536),
    "31.9B": dict(hidden_size=5120, intermediate_size=25600, num_hidden_layers=64, num_attention_heads=64,
                  num_key_value_heads=8, vocab_size=65536, head_dim=128),
    "cpu-3M": dict(hidden_size=256, intermediate_size=704, num_hidden_layers=4, num_attention_heads=8,
                   num_key_value_heads=4),
}
BIG_BATCH = {"31.9B": 32}   # the largest shape's second batch size (memory)


def messages(n: int) -> list[str]:
    return [f"{BASE[i % len(BASE)]} (item {i})" for i in range(n)]


def bench_embedded(n: int, name: str = "embedded") -> None:
    from builder.classify import load_classifier

    clf = load_classifier(name, device="cpu")
    clf.predict(messages(16))
    for kind, texts in (("chat messages", messages(n)),
                        ("issue reports", [f"{ISSUES[i % len(ISSUES)]} (item {i})" for i in range(max(1, n // 4))])):
        t0 = time.perf_counter()
        clf.predict(texts)
        dt = time.perf_counter() - t0
        print(f"{name} (CPU): {len(texts)} {kind} in {dt:.2f} s = {len(texts) / dt:.1f} msg/s")


def _timed(fn, cuda: bool) -> float:
    import torch

    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def bench_llm(n: int, batches: list[int], device: str, shape: str | None) -> None:
    import numpy as np
    import torch

    from builder.classify.llm import LLMLabelScorer
    from builder.cli import main as cli
    from tests.support.tiny_lm import build_tiny_lm

    cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    dev = "cuda" if cuda else "cpu"
    texts = messages(n)
    for name in [shape] if shape else (["1.2B", "7.5B", "31.9B"] if cuda else ["cpu-3M"]):
        with tempfile.TemporaryDirectory() as tmp:
            folder = build_tiny_lm(Path(tmp) / "m", model_overrides=SHAPES[name], weights=not cuda)
            s = LLMLabelScorer(str(folder), device=dev, batch_size=batches[0])
            if cuda:   # random bf16 weights built on the GPU (a 32 B model would not fit host memory in float32)
                from transformers import AutoConfig, AutoModelForCausalLM

                with torch.device(dev):
                    s.use_model(AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder),
                                                                 dtype=torch.bfloat16))
            n_params = sum(p.numel() for p in s.model.parameters())
            ids = [s.message_ids(t) for t in texts]
            S, R = len(s.suffix_ids), len(s._inp)
            need = sum(len(x) + S + R for x in ids)
            print(f"LLM {name}: {n_params / 1e6:,.0f} M params, {s.info['dtype']} on {dev} ({s.attention} attention); "
                  f"prefix {len(s.prefix_ids)} tokens, mean message {sum(map(len, ids)) / n:.0f} tokens, {n} messages")
            peak = None
            if cuda:
                gpu = torch.cuda.get_device_name()
                peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in gpu), None)
            rates = {}
            for b in batches:
                b = BIG_BATCH.get(name, b) if b == max(batches) and b > batches[0] else b
                s.batch_size = b
                s.label_scores(texts[:b])  # warm-up: prefix, kernels
                dt = _timed(lambda: s.label_scores(texts), cuda)
                rates[b] = n / dt
                useful = 2 * n_params * need / dt / 1e12
                share = f" = {useful / peak:.1%} of {peak:.0f}" if peak else ""
                print(f"  batch {b:3d}: {n / dt:8.1f} msg/s; useful {useful:.3g} TFLOP/s{share}")
            s.batch_size = batches[0]
            s.label_scores(texts[:batches[0]], prefix_reuse=False)
            dt_full = _timed(lambda: s.label_scores(texts, prefix_reuse=False), cuda)
            dt_reuse = n / rates[batches[0]]
            print(f"  prefix reuse speed-up (batch {batches[0]}): {dt_full / dt_reuse:.2f}x "
                  f"({n / dt_full:.1f} msg/s without)")
            a = s.label_scores(texts)
            single = np.vstack([s.label_scores([t]) for t in texts[:8]])
            s.batch_size = max(batches)
            c = s.label_scores(list(reversed(texts)))[::-1]
            same = np.array_equal(a[:8], single) and np.array_equal(a, c)
            print(f"  batch invariance (batch {batches[0]} vs 1 vs {max(batches)} reversed): "
                  f"{'bitwise equal' if same else 'DIFFERENT: max %.3g' % float(np.abs(a - c).max())}")
            # the CLI on the same messages: load, read, tokenize, score, write (no label cache)
            s.batch_size = batches[0]
            sess = Path(tmp) / "in.jsonl"
            sess.write_text("".join(json.dumps({"session_id": f"s{i}", "messages": [{"text": t}]}) + "\n"
                                    for i, t in enumerate(texts)), encoding="utf-8")
            if cuda and n_params > 16e9:
                print("  CLI vs scorer: skipped (its 64 GB of weights would not fit the device machine's disk)")
                continue
            run_cli = lambda: cli(["classify", str(sess), "--out", str(Path(tmp) / "out.jsonl"),  # noqa: E731
                                   "--classifier", str(folder), "--device", dev, "--batch-size",
                                   str(batches[0]), "--no-cache", "--quiet"])
            if cuda:
                s.model.save_pretrained(folder)
                del s
                torch.cuda.empty_cache()
                dt_cli = _timed(run_cli, cuda)
                print(f"  CLI vs scorer (batch {batches[0]}, weights loaded by the CLI): {dt_cli / dt_reuse:.2f}x "
                      f"({n / dt_cli:.1f} msg/s)")
                continue
            # CPU: a shared machine's load drifts, so time the two alternately and compare medians
            pairs = [(_timed(lambda: s.label_scores(texts), False), _timed(run_cli, False)) for _ in range(ROUNDS)]
            t_scorer, t_cli = (float(np.median(col)) for col in zip(*pairs))
            print(f"  CLI vs scorer (batch {batches[0]}, weights loaded by the CLI; medians of {ROUNDS} alternating "
                  f"runs): {t_cli / t_scorer:.2f}x ({n / t_cli:.1f} vs {n / t_scorer:.1f} msg/s; ratios per run "
                  f"{', '.join(f'{c / a:.2f}' for a, c in pairs)})")


def bench_ray(n: int, batch_size: int) -> None:
    from functools import partial

    from builder.classify import load_classifier
    from builder.classify.scale import connect, label_with_ray
    from tests.support.tiny_lm import build_tiny_lm

    ray = connect(None, num_cpus=2)
    texts = messages(n)
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_lm(Path(tmp) / "m")
        build = partial(load_classifier, str(folder), device="cpu", batch_size=batch_size)
        label_with_ray(texts[:8], build, batch_size=batch_size, actors=2)   # workers and data started
        for actors in (1, 2):
            t0 = time.perf_counter()
            label_with_ray(texts, build, batch_size=batch_size, actors=actors)
            dt = time.perf_counter() - t0
            print(f"Ray local (tiny LM, CPU): {actors} actor(s): {n / dt:.1f} msg/s ({dt:.1f} s, {n} messages)")
    ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512, help="messages for the embedded classifier")
    ap.add_argument("--llm-n", type=int, default=64, help="messages for the LLM scorer")
    ap.add_argument("--batch-size", type=int, action="append", help="LLM batch sizes (default 16 and 64)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--shape", choices=sorted(SHAPES), help="one LLM shape (default: the device's)")
    ap.add_argument("--classifier", action="append", help="embedded classifier(s) to time (default: embedded)")
    ap.add_argument("--no-llm", action="store_true", help="skip the LLM scorer")
    ap.add_argument("--no-embedded", action="store_true", help="skip the embedded classifiers")
    ap.add_argument("--ray", action="store_true", help="also time Ray's local scaling (1 vs 2 actors; the scale extra)")
    args = ap.parse_args()
    if not args.no_embedded:
        for name in args.classifier or ["embedded"]:
            bench_embedded(args.n, name)
    if not args.no_llm:
        bench_llm(args.llm_n, sorted(args.batch_size or [16, 64]), args.device, args.shape)
    if args.ray:
        bench_ray(args.llm_n, min(args.batch_size or [16]))


if __name__ == "__main__":
    main()
