"""Fail a test instead of hanging the suite when its body blocks (opening a FIFO, hashing a huge sparse file)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_hang(seconds: int) -> Iterator[None]:
    def _alarm(*_):
        raise TimeoutError(f"blocked for {seconds} s: something that never ends was opened")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
