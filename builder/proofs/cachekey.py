"""The key a proof report is cached under (and records): every input that determines its outcome.

Its own module so that both ``run_proof`` (:mod:`.run`) and the Harbor sessions (:mod:`.harbor_runner`) give the
same key without importing each other.
"""

from __future__ import annotations

import json

from swe_taskflow.hashing import sha256_hex

from .config import ProofConfig


def cache_key(script: str, image_id: str, tree: str, gold_patch: str | None, config: ProofConfig,
              sandbox: str) -> str:
    """sha256 of every input that determines a proof's outcome.

    Layout ``v: 1`` hashes ``json.dumps(sort_keys=True)`` (default separators, ASCII escapes), not
    :func:`swe_taskflow.hashing.sha256_json`: every published proof report records this key, so a
    change of bytes would change release content (CHANGELOG.md). A ``v: 2`` would move to sha256_json.
    """
    blob = json.dumps({"script": script, "image_id": image_id, "tree": tree, "sandbox": sandbox,
                       "patch": gold_patch or "", "limits": config.limits(), "v": 1}, sort_keys=True)
    return sha256_hex(blob.encode())


__all__ = ["cache_key"]
