"""Prompts out, replies in: prompt templates as data files (``builder/prompts/*.md``; their sha256 goes into
provenance) and the parsing of the model's JSON reply to them.

The one way the builder fills a template (these prompts, the augmentation writer's phrasings and
contracts): :func:`render`, ``{name}`` slots filled in one pass by :class:`string.Template`. A slot
with no value and every other brace (JSON in a prompt, code in an issue) stays as it is, and a value
is never searched for slots. The one way it reads a reply: :func:`parse_json_object`.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from typing import Any

from ..resources import builder_path

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


_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """A model's JSON answer: the whole reply, or the first ```json fence, or the outermost {...}.
    ``(object, "")`` or ``(None, why)``; never raises."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        candidates.append(text[i:j + 1])
    for c in candidates:
        try:
            obj = json.loads(c)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj, ""
        return None, f"the reply is JSON but a {type(obj).__name__}, not an object"
    return None, "the reply is not JSON"
