"""Write the exemplars' MiniLM embeddings the embedded classifier reads instead of encoding them
(builder/data/classifier/exemplars_v1.emb.npz; run it after changing the exemplars or the MiniLM package):

    .venv/bin/python -m tools.exemplar_embeddings [--check]

``--check`` encodes them and says whether the shipped file holds exactly these values (exit 1 if not).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from builder.classify.embedded import (DEFAULT_EXEMPLARS, EXEMPLAR_EMBEDDINGS, exemplar_embedding_key,
                                       load_exemplars, shared_encoder)

BATCH_SIZE = 64   # the recipes' and the CLI's default batch size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the shipped file; write nothing")
    a = ap.parse_args(argv)
    ex = load_exemplars(DEFAULT_EXEMPLARS)
    emb = shared_encoder("cpu", BATCH_SIZE).encode(list(ex.texts))
    key = exemplar_embedding_key(ex.sha256, BATCH_SIZE)
    if a.check:
        with np.load(EXEMPLAR_EMBEDDINGS, allow_pickle=False) as z:
            same = str(z["key"]) == key and np.array_equal(z["emb"], emb)
        print(f"{EXEMPLAR_EMBEDDINGS}: {'the same' if same else 'DIFFERENT'} ({emb.shape[0]} exemplars, {key})")
        return 0 if same else 1
    np.savez_compressed(EXEMPLAR_EMBEDDINGS, emb=emb, key=np.array(key))
    print(f"wrote {EXEMPLAR_EMBEDDINGS} ({emb.shape[0]} x {emb.shape[1]}, {key})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
