"""The offline default splitter: SWE-Bench Pro's own three sections become three turns.

Turn 1 is the issue; the requirement bullets are halved between turn 2 and turn 3, and the
interface section closes turn 3. Texts are kept verbatim, so the deterministic checks only fail
where the statement itself is degenerate. A task with too little to spread over three meaningful
turns is ``ineligible`` (it stays single-turn).

An issue with no requirements section (SWE-bench Verified, Lite, full SWE-bench: the prompt is the issue
alone) is split by its own blocks instead: paragraphs, lists and fenced code blocks (a fence is never cut)
are kept whole and in order, and cut into three consecutive parts of about equal length, the first
opening with the issue's first block, preferring cuts where each later part states a request (the
evaluation-context checks' rule); an issue of one or two paragraphs is cut between sentences. Fewer
than three blocks and sentences: ``ineligible``. This is a deterministic,
offline stand-in for the paper's LLM splitter (``split.splitter = "llm"``), which rewrites requirements
into turns; it discloses the issue's own text progressively and adds nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass
from functools import partial

from swe_taskflow.schema import SplitResult, Task
from swe_taskflow.split_checks import check_split

_ITEM = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*•+]|\d+[.)])\s)")
_NO_IFACE = re.compile(r"^\s*(?:none\.?|n/?a|no new (?:public )?interfaces?\b.*)$", re.I | re.S)


@dataclass(frozen=True)
class StructuralConfig:
    """Settings of the structural splitter."""

    requirements_header: str = "Requirements:"
    """Line that opens turn 2 (the section header of the original prompt, kept verbatim)."""
    interface_header: str = "New interfaces introduced:"
    """Line that opens the interface section inside turn 3."""


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*-])")


_FENCE = re.compile(r"^\s*(```|~~~)")


def issue_blocks(text: str) -> list[str]:
    """The issue's blocks, in order: runs of lines between blank lines, a fenced code block (with any blank
    lines inside it) always within one block."""
    blocks, cur, fence = [], [], None
    for line in text.strip("\n").split("\n"):
        m = _FENCE.match(line)
        if m:
            fence = None if fence and line.strip().startswith(fence) else (fence or m.group(1))
        if not line.strip() and fence is None:
            if cur:
                blocks.append("\n".join(cur))
                cur = []
            continue
        cur.append(line)
    if cur:
        blocks.append("\n".join(cur))
    return blocks


def thirds(blocks: list[str], issue: str | None = None) -> list[str]:
    """Three consecutive, non-empty groups of ``blocks`` whose lengths come closest to a third each.

    With ``issue``, cuts where turn 2 and turn 3 each hold a block that states a request or requirement
    (the evaluation-context checks' own test, swe_taskflow.context_checks) and turn 1 is long enough to state
    the problem are preferred: a later turn that only shows a traceback asks the agent for nothing. Where no
    cut qualifies, the most balanced one is returned and the checks reject it with their reason."""
    sizes = [len(b) for b in blocks]
    n = len(blocks)
    ok = None
    if issue is not None:
        from swe_taskflow.context_checks import _WORD, MIN_FIRST_TURN_WORDS, _has_request
        from swe_taskflow.split_checks import content_words, normalize, requirement_sentences
        units = [(normalize(u), content_words(u)) for u in requirement_sentences(issue)]
        req = [_has_request(b, units) for b in blocks]
        nwords = [len(_WORD.findall(b)) for b in blocks]
        ok = lambda i, j: (sum(nwords[:i]) >= MIN_FIRST_TURN_WORDS  # noqa: E731
                           and any(req[i:j]) and any(req[j:]))
    best = None
    for i in range(1, n - 1):
        for j in range(i + 1, n):
            parts = (sum(sizes[:i]), sum(sizes[i:j]), sum(sizes[j:]))
            cost = (0 if ok is None or ok(i, j) else 1, max(parts) - min(parts))
            if best is None or cost < best[0]:
                best = (cost, i, j)
    assert best is not None
    _, i, j = best
    return ["\n\n".join(blocks[:i]), "\n\n".join(blocks[i:j]), "\n\n".join(blocks[j:])]


def _items(text: str) -> list[str]:
    """Bullets / paragraphs; a single paragraph falls back to its sentences."""
    items = [p.strip("\n") for p in _ITEM.split(text.strip("\n")) if p.strip()]
    if len(items) == 1:
        items = [s for s in _SENTENCE.split(items[0]) if s.strip()]
    return items


class StructuralSplitter:
    """Split by the statement's sections; needs no model."""

    name = "structural"

    def __init__(self, config: StructuralConfig | None = None) -> None:
        self.config = config or StructuralConfig()
        sha = hashlib.sha256(repr(sorted(asdict(self.config).items())).encode()).hexdigest()
        self.info = {"name": self.name, "model": None, "prompt_sha256": None, "config_sha256": sha,
                     "config": asdict(self.config)}

    def parts(self, task: Task) -> tuple[list[str] | None, str]:
        """The three parts, or ``None`` and why the statement cannot be split structurally."""
        cfg = self.config
        if not task.problem_statement.strip():
            return None, "no problem statement"
        if not task.requirements.strip():   # the issue alone (SWE-bench): its own blocks, in order
            blocks = issue_blocks(task.problem_statement)
            if len(blocks) < 3:   # one or two paragraphs: their sentences (a code block stays whole)
                blocks = [u for b in blocks for u in ([b] if _FENCE.match(b) else _SENTENCE.split(b)) if u.strip()]
            if len(blocks) < 3:
                return None, "no requirements section and fewer than three blocks or sentences in the issue"
            return thirds(blocks, task.problem_statement), ""
        items = _items(task.requirements)
        iface = task.interface.strip("\n")
        has_iface = bool(iface.strip()) and not _NO_IFACE.match(iface.strip())
        if len(items) < 2 and not has_iface:
            return None, "a single requirement and no new interface: fewer than three meaningful turns"
        k = (len(items) + 1) // 2   # the first half (the larger one) opens turn 2
        turn2 = cfg.requirements_header + "\n" + "\n\n".join(items[:k])
        turn3 = "\n\n".join(items[k:])
        if iface.strip():
            turn3 = (turn3 + "\n\n" if turn3 else "") + cfg.interface_header + "\n" + iface
        return [task.problem_statement.strip("\n"), turn2, turn3], ""

    def split(self, task: Task) -> SplitResult:
        result = partial(SplitResult, task.instance_id, splitter=self.info, original_prompt=task.original_prompt)
        if task.status != "ok":
            return result("failed", reason=f"malformed task: {task.reason}")
        parts, why = self.parts(task)
        if parts is None:
            return result("ineligible", reason=why)
        violations = [v.to_dict() for v in check_split(task.original_prompt, parts)]
        if violations:
            return result("failed", parts=parts, violations=violations, reason="deterministic checks failed")
        return result("ok", parts=parts)
