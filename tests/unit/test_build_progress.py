"""The build's one progress display: rich bars on a terminal, plain timed lines in logs, nothing when quiet."""

from __future__ import annotations

import io

from builder.pipeline.build_progress import BuildProgress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _drive(progress: BuildProgress) -> None:
    sp = progress.stage("ingest", 1)
    sp.set_total(5)
    sp.advance(3, failed=1)
    sp.advance(2)
    progress.finish(sp, "ran")
    cached = progress.stage("scale", 2)
    cached.restore(4, 4, 0)
    progress.finish(cached, "cached")
    progress.close()


def test_quiet_prints_nothing_on_a_terminal_or_in_logs():
    for stream in (io.StringIO(), _Terminal()):
        _drive(BuildProgress(2, stream=stream, quiet=True))
        assert stream.getvalue() == ""


def test_logs_get_plain_lines_with_counts_and_status():
    stream = io.StringIO()
    _drive(BuildProgress(2, stream=stream, interval_s=60))
    assert "\x1b" not in stream.getvalue()          # no terminal codes in CI logs
    everything = stream.getvalue().splitlines()
    lines = [line for line in everything if line.endswith(("ran", "cached"))]
    assert len(everything) == 3                     # the first timed update, then nothing for 60 s but the ends
    assert "[1/2] ingest" in lines[0] and "5/5 done" in lines[0] and "1 failed" in lines[0] and lines[0].endswith("ran")
    assert "[2/2] scale" in lines[1] and "4/4 done" in lines[1] and lines[1].endswith("cached")


def test_a_terminal_gets_rich_bars_ending_with_each_stage_status():
    stream = _Terminal()
    _drive(BuildProgress(2, stream=stream))
    text = stream.getvalue()
    assert "\x1b[" in text                          # drawn live
    final = text.rsplit("\x1b[2K", 1)[-1]           # the last redraw: both bars, finished
    assert "[1/2] ingest" in final and "5/5" in final and "1 failed" in final and "ran" in final
    assert "[2/2] scale" in final and "4/4" in final and "cached" in final
