"""Throughput of the classifiers: the embedded default on CPU, and LLM label scoring with and without
prefix-KV reuse (a realistic-size Llama built from a config on GPU when one is there; a small one on CPU).

    python benchmarks/classify_bench.py [--n 512] [--llm-n 64] [--batch-size 16] [--device auto]
                                        [--classifier embedded --classifier embedded-v1] [--no-llm]

Prints messages/s (chat messages and issue reports separately for the embedded classifiers); on GPU also the achieved share of the GPU's dense bf16 peak (FLOPs counted as
2 x parameters x tokens processed) and the peak memory share. Messages are hand-written and varied.
"""

from __future__ import annotations

import argparse
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

# Dense bf16 peak (no sparsity), TFLOP/s, by device-name substring.
PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0, "L4": 121.0,
                    "4090": 165.0, "3090": 71.0, "V100": 125.0, "T4": 65.0}

REALISTIC = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                 num_key_value_heads=8, vocab_size=32000)  # ~1.1 B parameters, Llama-3.2-1B-like
SMALL = dict(hidden_size=256, intermediate_size=704, num_hidden_layers=4, num_attention_heads=8,
             num_key_value_heads=4)


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


def bench_llm(n: int, batch_size: int, device: str) -> None:
    import torch

    from builder.classify.llm import LLMLabelScorer
    from tests.support.tiny_lm import build_tiny_lm

    cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    size = REALISTIC if cuda else SMALL
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_lm(Path(tmp) / "m", model_overrides=size)
        s = LLMLabelScorer(str(folder), device="cuda" if cuda else "cpu", batch_size=batch_size, progress=False)
    n_params = sum(p.numel() for p in s.model.parameters())
    texts = messages(n)
    ids = [s.message_ids(t) for t in texts]
    P, S = len(s.prefix_ids), len(s.suffix_ids)
    rest = sum(len(x) - 1 for x in s.label_ids)
    print(f"LLM scorer: Llama {n_params / 1e6:.0f} M params, {s.info['dtype']} on {s.device}; "
          f"prefix {P} tokens, mean message {sum(map(len, ids)) / n:.0f} tokens, batch {batch_size}")
    for reuse in (True, False):
        s.label_scores(texts[:batch_size], prefix_reuse=reuse)  # warm-up (and the prefix cache)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        s.label_scores(texts, prefix_reuse=reuse)
        if cuda:
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        tokens = sum(len(x) + S + (0 if reuse else P) + rest for x in ids)
        line = f"  prefix reuse {'on ' if reuse else 'off'}: {n / dt:8.1f} msg/s ({dt:.2f} s, {tokens / dt:,.0f} tok/s)"
        if cuda:
            name = torch.cuda.get_device_name()
            peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)
            achieved = 2 * n_params * tokens / dt / 1e12
            share = f"{achieved / peak:.1%} of {peak:.0f} TFLOP/s bf16 peak" if peak else "peak unknown"
            mem = torch.cuda.max_memory_allocated() / torch.cuda.get_device_properties(0).total_memory
            line += f"; {achieved:.1f} TFLOP/s = {share} ({name}); peak memory {mem:.1%}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512, help="messages for the embedded classifier")
    ap.add_argument("--llm-n", type=int, default=64, help="messages for the LLM scorer")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--classifier", action="append", help="embedded classifier(s) to time (default: embedded)")
    ap.add_argument("--no-llm", action="store_true", help="skip the LLM scorer")
    args = ap.parse_args()
    for name in args.classifier or ["embedded"]:
        bench_embedded(args.n, name)
    if not args.no_llm:
        bench_llm(args.llm_n, args.batch_size, args.device)


if __name__ == "__main__":
    main()
