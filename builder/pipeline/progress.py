"""One progress display for a whole build, on stderr.

Per stage: items done, items failed, rate and time left. On a terminal the current stage's line
is redrawn in place; elsewhere (CI logs, pipes) one line is printed when a stage starts, at most
every few seconds while it runs, and when it ends, so logs stay short but a stuck stage is visible.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO


def _fmt_s(seconds: float) -> str:
    if seconds != seconds or seconds < 0:  # NaN
        return "?"
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


@dataclass
class StageProgress:
    """Counters of one stage; :meth:`advance` is called by the stage as items finish."""

    name: str
    index: int
    n_stages: int
    display: "BuildProgress"
    total: int | None = None
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)

    def set_total(self, total: int) -> None:
        self.total = int(total)
        self.display._draw(self, force=True)

    def advance(self, n: int = 1, *, failed: int = 0) -> None:
        """``n`` items finished, ``failed`` of them without success (they still count as done)."""
        self.done += n
        self.failed += failed
        self.display._draw(self)

    def line(self, *, final: str | None = None) -> str:
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        head = f"[{self.index}/{self.n_stages}] {self.name:<16}"
        count = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
        text = f"{head} {count:>9} done  {self.failed:>3} failed  {rate:7.1f}/s"
        if final == "cached":
            return f"{head} {count:>9} done  {self.failed:>3} failed  {'':>9}  {'':>7}  cached"
        if final is not None:
            return f"{text}  {_fmt_s(elapsed):>7}  {final}"
        left = (self.total - self.done) / rate if (self.total and rate > 0) else float("nan")
        return f"{text}  left {_fmt_s(left)}"


class BuildProgress:
    """The build's display; ``quiet`` prints nothing."""

    def __init__(self, n_stages: int, *, stream: TextIO | None = None, quiet: bool = False,
                 interval_s: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.n_stages = n_stages
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval_s = interval_s if interval_s is not None else (0.1 if self.tty else 5.0)
        self._last = 0.0
        self._open_line = False

    def stage(self, name: str, index: int) -> StageProgress:
        sp = StageProgress(name=name, index=index, n_stages=self.n_stages, display=self)
        self._draw(sp, force=True)
        return sp

    def _write(self, text: str, *, final: bool) -> None:
        if self.quiet:
            return
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
            self._open_line = not final
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _draw(self, sp: StageProgress, *, force: bool = False) -> None:
        now = time.monotonic()
        if force and not self.tty:  # logs: no line for every start or total, only timed updates and the end
            force = False
            if now - self._last < self.interval_s:
                return
        if not force and now - self._last < self.interval_s:
            return
        self._last = now
        self._write(sp.line(), final=False)

    def finish(self, sp: StageProgress, status: str) -> None:
        self._write(sp.line(final=status), final=True)

    def note(self, text: str) -> None:
        if self._open_line and self.tty and not self.quiet:
            self.stream.write("\n")
            self._open_line = False
        self._write(text, final=True)
