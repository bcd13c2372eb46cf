"""One progress display for a whole build, on stderr, built on ``rich.progress``.

Per stage: items done, items failed, rate and time left. On a terminal rich draws one live bar per
stage; elsewhere (CI logs, pipes) one line is printed at most every few seconds while a stage runs and
one when it ends, so logs stay short but a stuck stage is visible. ``quiet`` prints nothing.
Stages only call :meth:`StageProgress.set_total` and :meth:`StageProgress.advance`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def _fmt_s(seconds: float) -> str:
    if seconds != seconds or seconds < 0:  # NaN
        return "?"
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


@dataclass
class StageProgress:
    """Counters of one stage; the stage calls :meth:`advance` as items finish."""

    name: str
    index: int
    n_stages: int
    display: "BuildProgress"
    total: int | None = None
    done: int = 0
    failed: int = 0
    #: Of ``failed``, the items their own rows say are broken on purpose (the example's deliberately
    #: broken questions): a newcomer seeing "3 failed" must know these are meant to fail.
    failed_expected: int = 0
    started: float = field(default_factory=time.monotonic)

    def set_total(self, total: int) -> None:
        self.total = int(total)
        self.display.update(self, force=True)

    def advance(self, n: int = 1, *, failed: int = 0, expected: int = 0) -> None:
        """``n`` items finished, ``failed`` of them without success (they still count as done), ``expected``
        of those failing as their rows say they should."""
        self.done += n
        self.failed += failed
        self.failed_expected += expected
        self.display.update(self)

    def restore(self, total: int | None, done: int, failed: int, failed_expected: int = 0) -> None:
        """The counts a cached run recorded."""
        self.total, self.done, self.failed, self.failed_expected = total, done, failed, failed_expected

    def failed_text(self) -> str:
        """``  3 failed``, saying how many of them were meant to fail."""
        text = f"{self.failed:>3} failed"
        if self.failed_expected:
            which = "all" if self.failed_expected == self.failed else str(self.failed_expected)
            text += f" ({which} deliberately broken, as their rows say)"
        return text

    def line(self, *, final: str | None = None) -> str:
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        head = f"[{self.index}/{self.n_stages}] {self.name:<16}"
        count = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
        text = f"{head} {count:>9} done  {self.failed_text()}  {rate:7.1f}/s"
        if final == "cached":
            return f"{head} {count:>9} done  {self.failed_text()}  {'':>9}  {'':>7}  cached"
        if final is not None:
            return f"{text}  {_fmt_s(elapsed):>7}  {final}"
        left = (self.total - self.done) / rate if (self.total and rate > 0) else float("nan")
        return f"{text}  left {_fmt_s(left)}"


class BuildProgress:
    """The build's display: rich live bars on a terminal, timed lines elsewhere, nothing when ``quiet``."""

    def __init__(self, n_stages: int, *, stream: TextIO | None = None, quiet: bool = False,
                 interval_s: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.n_stages = n_stages
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval_s = interval_s if interval_s is not None else (0.1 if self.tty else 5.0)
        self._last = 0.0
        self._bars: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def _live(self) -> Progress | None:
        if self.quiet or not self.tty:
            return None
        if self._bars is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[failed]}"), TimeRemainingColumn(),
                                  TextColumn("{task.fields[status]}"),
                                  console=Console(file=self.stream), refresh_per_second=10)
            self._bars.start()
        return self._bars

    def stage(self, name: str, index: int) -> StageProgress:
        sp = StageProgress(name=name, index=index, n_stages=self.n_stages, display=self)
        bars = self._live()
        if bars is not None:
            self._tasks[name] = bars.add_task(f"[{index}/{self.n_stages}] {name:<16}", total=None,
                                              failed=sp.failed_text(), status="")
        return sp

    def update(self, sp: StageProgress, *, force: bool = False) -> None:
        """Show ``sp``'s counts: the live bar on a terminal; a line in logs at most every ``interval_s``."""
        bars = self._live()
        if bars is not None:
            bars.update(self._tasks[sp.name], total=sp.total, completed=sp.done, failed=sp.failed_text())
            return
        now = time.monotonic()
        if now - self._last < self.interval_s:   # logs: no line for every start or total, only timed updates
            return
        self._last = now
        self._write(sp.line())

    def finish(self, sp: StageProgress, status: str) -> None:
        bars = self._live()
        if bars is not None:
            bars.update(self._tasks[sp.name], total=sp.total if sp.total is not None else sp.done,
                        completed=sp.done, failed=sp.failed_text(), status=status)
            bars.stop_task(self._tasks[sp.name])
            return
        self._write(sp.line(final=status))

    def note(self, text: str) -> None:
        bars = self._live()
        if bars is not None:
            bars.console.print(text)
            return
        self._write(text)

    def close(self) -> None:
        """End the live display (the finished bars stay on screen)."""
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    def _write(self, text: str) -> None:
        if not self.quiet:   # quiet: no bars either (``_live``)
            self.stream.write(text + "\n")
            self.stream.flush()
