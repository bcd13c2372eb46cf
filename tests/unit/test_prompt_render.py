"""The one way the builder fills a template (builder.llm.prompts.render): ``{name}`` slots in one pass."""

from __future__ import annotations

from builder.llm.prompts import PROMPTS_DIR, render


def test_slots_filled_once_braces_and_unknown_slots_kept():
    tpl = 'Issue:\n{issue}\nTurns: {turns}\nAnswer {"complete": true} or {other}; {issue}'
    out = render(tpl, issue="f'{turns}' and {x}", turns="T1")
    # a value is never searched for slots; JSON braces and a slot with no value stay as written
    assert out == 'Issue:\nf\'{turns}\' and {x}\nTurns: T1\nAnswer {"complete": true} or {other}; f\'{turns}\' and {x}'


def test_every_prompt_uses_the_one_slot_syntax():
    for path in PROMPTS_DIR.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert "{{" not in text, path.name
        assert render(text) == text, path.name     # nothing but slots changes
