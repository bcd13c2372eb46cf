"""Prompt templates as data files (``builder/prompts/*.md``); their sha256 goes into provenance.

The one way the builder fills a template (these prompts, the augmentation writer's phrasings and
contracts): :func:`render`, ``{name}`` slots filled in one pass by :class:`string.Template`. A slot
with no value and every other brace (JSON in a prompt, code in an issue) stays as it is, and a value
is never searched for slots.
"""

from __future__ import annotations

import hashlib
import string

from builder.resources import builder_path

PROMPTS_DIR = builder_path("prompts")


def load_prompt(name: str) -> tuple[str, str]:
    """``(template, sha256)`` of ``builder/prompts/<name>.md``."""
    text = (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Slots(string.Template):
    pattern = r"\{(?:(?P<named>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<braced>(?!))|(?P<escaped>(?!))|(?P<invalid>(?!)))"


def render(template: str, **values: str) -> str:
    """``template`` with its ``{name}`` slots filled from ``values`` (others left as they are)."""
    return _Slots(template).safe_substitute(values)
