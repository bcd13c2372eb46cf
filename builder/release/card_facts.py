"""Every number the dataset card states, computed from the release's rows (nothing typed by hand).

The card renders these facts; the card test recomputes each from the published parquet files
through ``load_dataset`` with its own code and checks the card's text against them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

ISSUE_KIND = "issue"
#: The split other splits are compared with turn for turn (the issue split into its parts).
SPLIT_REFERENCE = "split_prompt"


def _turns_key(row: Mapping[str, Any]) -> tuple:
    return tuple((t["kind"], t["text"]) for t in row["turns"])


def answer_turns(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A row's answer turns: every turn of a kind other than ``issue`` (qa and every augmentation)."""
    return [t for t in row["turns"] if t["kind"] != ISSUE_KIND]


@dataclass
class SplitFacts:
    name: str
    condition: str | None
    pool: str | None
    rows: int
    instance_ids: list[str]
    turns: int
    min_turns: int
    max_turns: int
    rows_with_answers: int
    answer_turns: Counter = field(default_factory=Counter)    # kind -> turns
    questions: int = 0                                       # distinct question ids
    equal_to_reference: int | None = None                    # rows equal to split_prompt turn for turn
    split_ok: int = 0                                        # rows whose issue was split into 3 parts


@dataclass
class ReleaseFacts:
    tasks: list[str]                        # distinct instance ids, in first-seen order
    repos: int
    languages: Counter                      # per task
    sources: Counter                        # (source, source_revision) per task
    splits: list[SplitFacts]
    full_splits: list[str]                  # splits holding every task in the reference order
    subset_splits: dict[str, list[str]]     # split -> its tasks, when it holds fewer (in reference order)
    answer_subset_of: dict[str, str]        # split -> a full split whose rows with answer turns are its tasks
    questions: int                          # distinct question ids over all splits
    answer_kinds: Counter                   # kind -> distinct questions / references of that kind

    @property
    def total_rows(self) -> int:
        return sum(s.rows for s in self.splits)


def release_facts(splits: Mapping[str, Sequence[Mapping[str, Any]]]) -> ReleaseFacts:
    """Facts of the session splits (split name -> rows, in release order)."""
    tasks: dict[str, Mapping[str, Any]] = {}
    for rows in splits.values():
        for r in rows:
            tasks.setdefault(r["instance_id"], r)
    ref_rows = {r["instance_id"]: r for r in splits.get(SPLIT_REFERENCE, [])}
    order = list(tasks)
    out: list[SplitFacts] = []
    all_q: dict[str, str] = {}
    for name, rows in splits.items():
        n_turns = [len(r["turns"]) for r in rows]
        kinds = Counter(t["kind"] for r in rows for t in answer_turns(r))
        qids = {q["question_id"] for r in rows for q in r["questions"]}
        for r in rows:
            for q in r["questions"]:
                all_q.setdefault(q["question_id"], str(q.get("kind") or "qa"))
        eq = None
        if ref_rows and name != SPLIT_REFERENCE:
            eq = sum(1 for r in rows if r["instance_id"] in ref_rows
                     and _turns_key(r) == _turns_key(ref_rows[r["instance_id"]]))
        first = rows[0] if rows else {}
        out.append(SplitFacts(
            name=name, condition=first.get("condition"), pool=first.get("question_pool"), rows=len(rows),
            instance_ids=[r["instance_id"] for r in rows], turns=sum(n_turns),
            min_turns=min(n_turns, default=0), max_turns=max(n_turns, default=0),
            rows_with_answers=sum(1 for r in rows if answer_turns(r)), answer_turns=kinds, questions=len(qids),
            equal_to_reference=eq, split_ok=sum(1 for r in rows if r["split_status"] == "ok")))
    full = [s.name for s in out if s.instance_ids == order]
    subset = {}
    for s in out:
        if s.name not in full:
            pos = [order.index(i) for i in s.instance_ids]
            if pos == sorted(pos):
                subset[s.name] = s.instance_ids
    answer_subset = {}
    for name, ids in subset.items():
        for f in full:
            carrying = [r["instance_id"] for r in splits[f] if answer_turns(r)]
            if carrying == ids:
                answer_subset[name] = f
                break
    return ReleaseFacts(
        tasks=order, repos=len({t["repo"] for t in tasks.values()}),
        languages=Counter(t["repo_language"] or "unknown" for t in tasks.values()),
        sources=Counter((t["source"], t["source_revision"]) for t in tasks.values()), splits=out,
        full_splits=full, subset_splits=subset, answer_subset_of=answer_subset, questions=len(all_q),
        answer_kinds=Counter(all_q.values()))


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` examples."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
              (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for bound, label in bounds:
        if n < bound:
            return label
    return "n>1B"


__all__ = ["release_facts", "ReleaseFacts", "SplitFacts", "size_category", "answer_turns", "SPLIT_REFERENCE"]
