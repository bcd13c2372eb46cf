"""What kind of user turn an exported step's instruction is, read from the instruction alone.

Harbor hands an agent the step's ``instruction.md`` and nothing else (no step name, no kind). The export
(``builder.evaluation.export.answer_instruction``) ends every answer turn with one fixed note naming the
answer file; an issue turn is the user's text and nothing else. The agent frames only issue turns
(paper, Appendix E: the agent receives the typed prompts; only an issue is "solved"), so it must tell
them apart; ``tests/unit/test_harbor_turns.py`` holds this reading to the export's own writer.
No Harbor import here: the project's tests read it from the project's venv.
"""

from __future__ import annotations

import re

ISSUE, ANSWER = "issue", "answer"
#: The export's answer note (``builder.evaluation.export.ANSWER_NOTE`` under ``ANSWER_DIR``), at the very end.
ANSWER_NOTE_RE = re.compile(r"\n\nWrite your answer to the file `/tmp/answers/[A-Za-z0-9._-]+\.md` "
                            r"\(create its folder if needed\)\.\n*\Z")


def turn_kind(instruction: str) -> str:
    """``"answer"`` when the instruction ends with the export's answer note, else ``"issue"``."""
    return ANSWER if ANSWER_NOTE_RE.search(instruction or "") else ISSUE


__all__ = ["ISSUE", "ANSWER", "ANSWER_NOTE_RE", "turn_kind"]
