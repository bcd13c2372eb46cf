"""Proof validation: run untrusted proof scripts in a sandbox and judge them from recorded facts.

Docker (the task image, or the local test image) is the main sandbox, bubblewrap the fallback;
see docs/proofs.md. Statuses and the classifier live in the pure core, :mod:`swe_taskflow.proofs`.
"""

from .config import SANDBOXES, ProofConfig
from .image import DEFAULT_IMAGE, build_test_image
from .pool import PoolResult, PoolSummary, ProofTask, validate_pool, validate_pool_file
from .run import ProofRunner, resolve_sandbox, run_proof
from .gitsafe import tree_hash

__all__ = ["DEFAULT_IMAGE", "PoolResult", "PoolSummary", "ProofConfig", "ProofRunner", "ProofTask", "SANDBOXES",
           "build_test_image", "resolve_sandbox", "run_proof", "tree_hash", "validate_pool", "validate_pool_file"]
