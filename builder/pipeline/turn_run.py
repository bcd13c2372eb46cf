"""The one body of the two stages that realize checked answer turns, ``augment`` and ``stress``.

Both read their hand-written specs, open their section's writer and the proof sandbox, run their loop
(``augment_tasks`` or ``build_slices``) with the answer-turn table's ``realize``, stop every sandbox environment
whatever happens, and keep the items without their wall-clock timings. They differ only in what they draw and
how they summarize it, and keep their own stage keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..turns import get_writer
from ..turns.registry import realize
from .repos import sandbox_setup
from .volatile import strip_items


@dataclass(frozen=True)
class TurnRun:
    """What a stage's loop gave (``result``), its items without their timings, and who worded and checked them."""

    result: Any
    items: list
    timings: Any
    writer: Any
    backend: Any
    sandbox_info: dict


def run_turns(ctx, tasks, sec, loop: Callable[..., Any], *, items_of: Callable[[Any], list], section: str,
              needs_sandbox: bool, total: int, templates=None) -> TurnRun:
    """Run ``loop(writer=, realize=, sandbox=, repos=, images=, progress=)`` for the recipe section ``sec``."""
    kw = {} if templates is None else {"templates": templates}
    writer, backend = get_writer(sec, ctx.recipe.resolve, section=section, **kw)
    sandbox, repos, images, sb_info = (sandbox_setup(ctx, tasks, timeout_s=sec.timeout_s) if needs_sandbox
                                       else (None, {}, {}, {"sandbox": "none"}))
    ctx.progress.set_total(total)
    try:
        result = loop(writer=writer, realize=realize, sandbox=sandbox, repos=repos, images=images,
                      progress=lambda n: ctx.progress.advance(n))
    finally:   # harbor: every environment and the worker stopped, also on an error or an interrupt
        if sandbox is not None:
            sandbox.close()
    kept, timings = strip_items(items_of(result))
    return TurnRun(result, kept, timings, writer, backend, sb_info)


__all__ = ["TurnRun", "run_turns"]
