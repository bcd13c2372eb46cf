#!/usr/bin/env bash
# Issue 35's GPU checks in one short run (a GPU session; about 10 minutes on one H200): the `gpu` tests (bf16
# batch invariance on CUDA, FlexAttention compiled), then the kernel figures docs/classify.md asks for.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
"$PY" -m pytest tests/unit/test_classify_llm.py -m gpu -q -p no:cacheprovider
"$PY" benchmarks/classify_bench.py --device cuda --no-embedded --llm-n "${N:-512}"
