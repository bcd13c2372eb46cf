"""Parse a model's JSON answer: the whole reply, or the first ```json fence, or the outermost {...}."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """``(object, "")`` or ``(None, why)``; never raises."""
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
