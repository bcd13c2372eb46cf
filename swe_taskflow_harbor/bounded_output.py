"""A command's output kept bounded on the host: its first and last bytes, and how much was dropped between.

Every command of a Harbor environment (an agent's, a verifier's, the proof worker's) streams its output
through one :class:`HeadTail`: the host keeps at most ``cap`` bytes whatever the command prints (300 MB of
output once took a trial from 44 MB to 912 MB), and the text a caller gets says where and how much was dropped.
The head shows how a command started, the tail how it ended (a test summary, an exit message).
"""

from __future__ import annotations

from collections import deque

#: Bytes of one command's output a Harbor environment keeps (half from its start, half from its end).
OUTPUT_CAP_BYTES = 4 << 20


class HeadTail:
    """The first ``cap // 2`` and the last ``cap - cap // 2`` bytes of a stream, fed in chunks."""

    def __init__(self, cap: int = OUTPUT_CAP_BYTES) -> None:
        if cap < 2:
            raise ValueError(f"an output cap must be at least 2 bytes, not {cap}")
        self.head_cap, self.tail_cap = cap // 2, cap - cap // 2
        self.head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail.append(bytes(data))
        self._tail_bytes += len(data)
        while self._tail_bytes - len(self._tail[0]) >= self.tail_cap:   # whole chunks no longer needed
            self._tail_bytes -= len(self._tail.popleft())

    @property
    def tail(self) -> bytes:
        data = b"".join(self._tail)
        return data[len(data) - self.tail_cap:] if len(data) > self.tail_cap else data

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """The kept output as text; where bytes were dropped, one line says how many."""
        head, tail = bytes(self.head), self.tail
        if not self.dropped:
            return (head + tail).decode(errors="replace")
        return (head.decode(errors="replace")
                + f"\n[swe-taskflow: {self.dropped} bytes of output dropped here (of {self.total}); kept the first "
                  f"{len(head)} and the last {len(tail)}]\n"
                + tail.decode(errors="replace"))


__all__ = ["HeadTail", "OUTPUT_CAP_BYTES"]
