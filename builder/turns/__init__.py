"""Every checked answer turn, builder side: generation, creation-time checks, writers and the stress slices.

One folder for the kinds of docs/augmentations.md (execute, debug, planning, review) and docs/stress.md
(destructive-request, security-review): :mod:`.registry` says per kind which check realizes a spec; the pure
parts (kinds, references, scorers, re-checks) live in :mod:`swe_taskflow.turns`.
"""

from .checks import AugmentSpec, TaskContext, read_spec_files, read_specs
from .propose import ProposeConfig, augment_tasks, propose
from .slices import build_slices
from .stress_checks import StressSpec
from .writers import LLMWriter, TemplateWriter, WriterError, get_writer

__all__ = ["AugmentSpec", "read_specs", "read_spec_files", "TaskContext", "ProposeConfig", "propose",
           "augment_tasks", "TemplateWriter", "LLMWriter", "WriterError", "get_writer", "StressSpec", "build_slices"]
