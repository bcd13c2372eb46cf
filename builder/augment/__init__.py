"""Generation and creation-time checks of the augmentation turns (execute, debug, planning, review).

See docs/augmentations.md for each kind's contract. The pure parts (kinds, references, scorers)
live in :mod:`swe_taskflow.augment`.
"""

from .checks import AugmentSpec, TaskContext, read_spec_files, read_specs
from .propose import ProposeConfig, augment_tasks, propose
from .writers import LLMWriter, TemplateWriter, WriterError, get_writer

__all__ = ["AugmentSpec", "read_specs", "read_spec_files", "TaskContext", "ProposeConfig", "propose",
           "augment_tasks", "TemplateWriter", "LLMWriter", "WriterError", "get_writer"]
