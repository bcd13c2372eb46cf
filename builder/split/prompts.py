"""Prompt templates as data files (``builder/prompts/*.md``); their sha256 goes into provenance."""

from __future__ import annotations

import hashlib

from builder.resources import builder_path

PROMPTS_DIR = builder_path("prompts")


def load_prompt(name: str) -> tuple[str, str]:
    """``(template, sha256)`` of ``builder/prompts/<name>.md``."""
    text = (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def render(template: str, **values: str) -> str:
    """Fill ``{{name}}`` placeholders (plain replacement: issue text may hold braces)."""
    for k, v in values.items():
        template = template.replace("{{" + k + "}}", v)
    return template
