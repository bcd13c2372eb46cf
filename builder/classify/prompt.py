"""The classifier prompt template (``builder/prompts/classify_v1.txt``): the paper's Appendix A
instructions and the 16 definitions, with one ``{message}`` slot. Its sha256 goes into every label's
provenance and cache key, so a prompt edit can never silently reuse old labels."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.errors import ConfigError
from builder.resources import builder_path

PROMPTS_DIR = builder_path("prompts")
DEFAULT_PROMPT = PROMPTS_DIR / "classify_v1.txt"
SLOT = "{message}"


@dataclass(frozen=True)
class PromptTemplate:
    """A template split at its message slot so the shared head can be encoded once (prefix KV cache)."""

    prefix: str
    """Everything before the message: instructions, definitions, the ``Message:`` line."""
    suffix: str
    """Everything after the message, ending where the label is to be written (``task_type:``)."""
    sha256: str
    """sha256 of the template file's bytes."""
    name: str
    """File name, e.g. ``classify_v1.txt``."""

    def render(self, message: str) -> str:
        return self.prefix + message + self.suffix


def load_prompt_template(path: str | Path = DEFAULT_PROMPT) -> PromptTemplate:
    path = Path(path)
    if not path.is_file():
        raise ConfigError("prompt template not found", path=str(path))
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    if text.count(SLOT) != 1:
        raise ConfigError("prompt template must hold exactly one message slot", path=str(path),
                          expected=SLOT, actual=text.count(SLOT))
    prefix, suffix = text.split(SLOT)
    return PromptTemplate(prefix=prefix, suffix=suffix.rstrip("\n").rstrip(" "),
                          sha256=hashlib.sha256(raw).hexdigest(), name=path.name)
