"""Progress bars for long work outside the build runner, on ``rich.progress``.

Bars go to stderr and only when stderr is a terminal: logs, pipes and tests stay clean, and the
work itself never depends on whether a bar is shown.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")


@contextmanager
def progress_bar(total: int | None, *, desc: str, unit: str = "item", enabled: bool = True,
                 rate: bool = False) -> Iterator[Callable[..., None]]:
    """A bar of ``total`` steps; yields ``advance(note="", n=1)``, a no-op when no bar is shown.
    ``rate`` adds the steps per second (``12.3 msgs/s``) before the time left."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda note="", n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task) -> Text:
            return Text(f"{task.speed:,.1f} {unit}/s" if task.speed else f"- {unit}/s")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
               *((Rate(),) if rate else ()), TimeRemainingColumn(), TextColumn("{task.fields[note]}"))
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(desc, total=total, note="")

        def advance(note: str = "", n: int = 1) -> None:
            bar.update(task, advance=n, note=note)

        yield advance


def track(items: Iterable[T], *, desc: str, total: int | None = None, unit: str = "item",
          enabled: bool = True) -> Iterator[T]:
    """``items`` as they are, with a bar over them on a terminal."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)   # type: ignore[arg-type]
    with progress_bar(total, desc=desc, unit=unit, enabled=enabled) as advance:
        for item in items:
            yield item
            advance()


__all__ = ["progress_bar", "track"]
