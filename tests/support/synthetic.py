"""Synthetic release inputs: paper-sized releases for benchmarks and tests, built from real schema objects.

Every text here is generated filler marked as such (``source = "synthetic"``, texts start with
``[synthetic]``); nothing is presented as model output or as a real task. Deterministic in ``seed``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from swe_taskflow.rows import build_row
from swe_taskflow.schema import QAItem, Session, SplitResult, Task, Turn

ISSUE_INTENTS = ("bug-fix", "new-feature", "refactor", "tests", "debug", "transformation")
QA_INTENTS = ("explain", "question", "code-review")
POOLS = ("sol", "terra")
PLACEMENTS = ("qa_first", "qa_last", "qa_random", "qa_only")


def paper_split_names() -> list[str]:
    """The paper's 12 splits: 3 prompt-only, 4 placements x 2 pools, and the optimized selection."""
    return ["single_prompt", "split_prompt", "split_prompt_concat",
            *[f"{p}_{pool}" for pool in POOLS for p in PLACEMENTS], "tfas_optimized"]


def _filler(rng: np.random.Generator, words: int) -> str:
    vocab = ("module", "handler", "config", "parser", "request", "cache", "user", "token", "value", "field",
             "error", "test", "returns", "should", "when", "the", "a", "is", "in", "of", "list", "path")
    return "[synthetic] " + " ".join(vocab[i] for i in rng.integers(0, len(vocab), size=words))


def synthetic_task(i: int, rng: np.random.Generator) -> tuple[Task, SplitResult, list[QAItem]]:
    iid = f"synthetic__repo-{i:05d}"
    prompt = _filler(rng, int(rng.integers(80, 240)))
    task = Task(instance_id=iid, source="synthetic", source_revision="0", repo=f"synthetic/repo{i % 11}",
                base_commit=f"{i:040x}", original_prompt=prompt, problem_statement=prompt,
                image_name=f"synthetic/image:{i}", repo_language="python")
    parts = tuple(_filler(rng, int(rng.integers(20, 80))) for _ in range(3))
    split = SplitResult(instance_id=iid, status="ok", parts=parts, original_prompt=prompt,
                        splitter={"name": "synthetic"})
    qas = []
    for pool in POOLS:
        for k in range(int(rng.integers(1, 4))):
            qid = f"{iid}:{pool}:{k}"
            qas.append(QAItem(
                question_id=qid, instance_id=iid, question=_filler(rng, 15), reference_answer=_filler(rng, 30),
                evidence=({"path": f"src/m{k}.py", "symbol": f"f{k}", "note": "[synthetic]"},),
                proof_script="#!/bin/sh\ngrep -n f src/m.py\n", pool=pool, status="accepted",
                generator={"model": "synthetic", "provenance": "synthetic"}, reviewer={"model": "synthetic"},
                proof_report={"status": "passed", "sandbox": "bwrap", "image": "host", "exit_codes": [0],
                              "stdout_sha256": f"{i * 7 + k:064x}", "tree_sha_before": f"{i:040x}",
                              "tree_sha_after": f"{i:040x}", "duration_s": float(rng.integers(5, 90)) / 100},
                intent=str(rng.choice(QA_INTENTS))))
    return task, split, qas


def sessions_for(task: Task, split: SplitResult, qas: list[QAItem], rng: np.random.Generator) -> dict[str, Session]:
    iid = task.instance_id
    issue_intents = [str(x) for x in rng.choice(ISSUE_INTENTS, size=3)]
    issue = [Turn(0, "issue", p, it, (n,)) for n, (p, it) in enumerate(zip(split.parts, issue_intents))]

    def renumber(turns):
        return tuple(Turn(n, t.kind, t.text, t.intent, t.split_parts, t.question_id) for n, t in enumerate(turns))

    out = {"single_prompt": Session(iid, "single_prompt", (Turn(0, "issue", task.original_prompt, issue_intents[0]),)),
           "split_prompt": Session(iid, "split_prompt", renumber(issue)),
           "split_prompt_concat": Session(iid, "split_prompt_concat", (
               Turn(0, "issue", "\n\n".join(split.parts), issue_intents[0], (0, 1, 2)),))}
    for pool in POOLS:
        qturns = [Turn(0, "qa", q.question, q.intent, (), q.question_id) for q in qas if q.pool == pool]
        mixed = issue + qturns
        order = rng.permutation(len(mixed))
        placed = {"qa_first": qturns + issue, "qa_last": issue + qturns,
                  "qa_random": [mixed[j] for j in order], "qa_only": qturns}
        for p, turns in placed.items():
            out[f"{p}_{pool}"] = Session(iid, p, renumber(turns), question_pool=pool)
    first_q = Turn(0, "qa", qas[0].question, qas[0].intent, (), qas[0].question_id)
    out["tfas_optimized"] = Session(iid, "tfas_optimized", renumber([issue[0], first_q, *issue[1:]]),
                                    question_pool=qas[0].pool)
    return out


def synthetic_splits(n_tasks: int = 700, *, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Release rows of the paper's 12 splits over ``n_tasks`` synthetic tasks (12 x n_tasks rows)."""
    rng = np.random.default_rng(seed)
    splits: dict[str, list[dict[str, Any]]] = {name: [] for name in paper_split_names()}
    for i in range(n_tasks):
        task, split, qas = synthetic_task(i, rng)
        for name, sess in sessions_for(task, split, qas, rng).items():
            splits[name].append(build_row(task, sess, split, qas, where=f"synthetic {name}", row=i))
    return splits


def uniform_target(path, *, name: str = "synthetic-uniform") -> None:
    """Write a target Task-Flow file measured on a fixed synthetic corpus (marked provisional)."""
    from swe_taskflow.flow import count_sessions
    from swe_taskflow.target import Target
    seqs = [["bug-fix", "explain", "tests"], ["new-feature", "debug", "bug-fix", "question"],
            ["refactor", "code-review", "tests"], ["debug", "explain", "bug-fix", "execute", "tests"]]
    Target.from_counts(count_sessions(seqs), name=name, population="synthetic sessions (not a user population)",
                       provisional=True, description="Synthetic target for tests and benchmarks.").save(path)


__all__ = ["synthetic_splits", "paper_split_names", "synthetic_task", "sessions_for", "uniform_target"]


# ---------------------------------------------------------------- small releases over real tasks (tests, docs)
def tasks_from_pro_jsonl(path, n: int, *, revision: str = "swe_bench_pro_public_731.jsonl") -> list[Task]:
    """The first ``n`` SWE-Bench Pro tasks (MIT, Scale AI) of the shared JSONL as Task records.

    A minimal reader for tests and examples; the project's source ingestion lives elsewhere.
    """
    import json
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            out.append(Task(instance_id=d["instance_id"], source="ScaleAI/SWE-bench_Pro", source_revision=revision,
                            repo=d["repo"], base_commit=d["base_commit"], original_prompt=d["problem_statement"],
                            problem_statement=d["problem_statement"], requirements=d.get("requirements", ""),
                            interface=d.get("interface", ""), image_name=d.get("image_name", ""),
                            repo_language=d.get("repo_language", ""), fail_to_pass=d.get("fail_to_pass", ()),
                            pass_to_pass=d.get("pass_to_pass", ())))
            if len(out) >= n:
                break
    return out


def hand_written_tasks() -> list[Task]:
    """Three tiny hand-written tasks (labelled so in every text) for when ../shared is absent."""
    out = []
    for i, (title, lang) in enumerate((("Fix off-by-one in pagination", "python"),
                                       ("Add a --json flag to the export command", "go"),
                                       ("Cache parsed configs between calls", "ts"))):
        text = (f"[hand-written] {title}.\n\nThe current behaviour is wrong in one case.\n\n"
                f"Requirements: keep the public API.\n\nAdd a test for the new behaviour.")
        out.append(Task(instance_id=f"hand-written__task-{i}", source="hand-written", source_revision="1",
                        repo=f"example/repo{i}", base_commit=f"{i + 1:040x}", original_prompt=text,
                        problem_statement=text, repo_language=lang, image_name=f"example/image:{i}",
                        extra={"provenance": "hand-written"}))
    return out


def paragraph_split(task: Task) -> SplitResult:
    """A structural 3-part split on paragraph boundaries (no model), or ineligible with a reason."""
    paras = [p for p in task.original_prompt.split("\n\n") if p.strip()]
    if len(paras) < 3:
        return SplitResult(task.instance_id, "ineligible", reason="fewer than 3 paragraphs",
                           original_prompt=task.original_prompt, splitter={"name": "paragraph-split"})
    k = len(paras)
    cuts = (0, k // 3 or 1, (2 * k) // 3 or 2, k)
    parts = tuple("\n\n".join(paras[cuts[j]:cuts[j + 1]]) for j in range(3))
    return SplitResult(task.instance_id, "ok", parts=parts, original_prompt=task.original_prompt,
                       splitter={"name": "paragraph-split", "provenance": "structural"})


def hand_written_questions(task: Task, n: int) -> list[QAItem]:
    """``n`` hand-written repository questions (labelled hand-written) with a passing proof report."""
    out = []
    for k in range(n):
        out.append(QAItem(
            question_id=f"{task.instance_id}:hw{k}", instance_id=task.instance_id,
            question=f"[hand-written] Which file defines the entry point used in {task.repo} (question {k})?",
            reference_answer="[hand-written] The entry point is defined in the package's main module.",
            evidence=({"path": "README.md", "symbol": "", "note": "hand-written"},),
            proof_script="#!/bin/sh\nls -1 | head -n 5\n", pool="sol", status="accepted",
            generator={"provenance": "hand-written"}, reviewer={"provenance": "hand-written"},
            proof_report={"status": "passed", "sandbox": "bwrap", "image": "host", "exit_codes": [0],
                          "stdout_sha256": "0" * 64, "tree_sha_before": "1" * 40, "tree_sha_after": "1" * 40,
                          "duration_s": 0.05 + 0.01 * k, "provenance": "hand-written"},
            intent=("explain", "question")[k % 2]))
    return out


def small_release_splits(tasks: list[Task], *, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Rows of four conditions (single, split, qa_random_sol, qa_only_sol) over ``tasks``.

    Split-ineligible tasks stay single-turn in every condition, with their split status.
    """
    rng = np.random.default_rng(seed)
    splits: dict[str, list[dict[str, Any]]] = {"single_prompt": [], "split_prompt": [], "qa_random_sol": [],
                                               "qa_only_sol": []}
    for i, task in enumerate(tasks):
        split = paragraph_split(task)
        qas = hand_written_questions(task, 1 + i % 2)
        single = Turn(0, "issue", task.original_prompt, "bug-fix")
        issue = [Turn(n, "issue", p, it, (n,)) for n, (p, it) in
                 enumerate(zip(split.parts, ("bug-fix", "new-feature", "tests")))] if split.status == "ok" else [single]
        qturns = [Turn(0, "qa", q.question, q.intent, (), q.question_id) for q in qas]
        mixed = issue + qturns
        mixed = [mixed[j] for j in rng.permutation(len(mixed))]
        renum = lambda ts: tuple(Turn(n, t.kind, t.text, t.intent, t.split_parts, t.question_id)  # noqa: E731
                                 for n, t in enumerate(ts))
        sessions = {"single_prompt": Session(task.instance_id, "single_prompt", (single,)),
                    "split_prompt": Session(task.instance_id, "split_prompt", renum(issue)),
                    "qa_random_sol": Session(task.instance_id, "qa_random", renum(mixed), question_pool="sol"),
                    "qa_only_sol": Session(task.instance_id, "qa_only", renum(qturns), question_pool="sol")}
        for name, sess in sessions.items():
            splits[name].append(build_row(task, sess, split, qas, row=i))
    return splits


__all__ += ["tasks_from_pro_jsonl", "hand_written_tasks", "paragraph_split", "hand_written_questions",
            "small_release_splits", "small_release", "tamper_release"]


def small_release(root, *, name: str, version: str = "v1", target: str = "t.json", **kw) -> Any:
    """The hand-written tasks' small release (``small_release_splits``) at ``root/rel``, with a uniform target at
    ``root/<target>``; ``kw`` goes to ``write_release`` (``provenance`` defaults to empty)."""
    from pathlib import Path

    from builder.release import write_release

    root = Path(root)
    uniform_target(root / target)
    write_release(root / "rel", name=name, version=version, splits=small_release_splits(hand_written_tasks()),
                  target_path=root / target, **{"provenance": {}, **kw})
    return root / "rel"


def tamper_release(root, pro_sample) -> Any:
    """A small verified release (3 real SWE-Bench Pro tasks and the hand-written ones) at ``root/rel``, for tests
    that tamper with a copy of it."""
    from pathlib import Path

    from builder.release import write_release
    from swe_taskflow.verify import verify_release

    root = Path(root)
    tasks = tasks_from_pro_jsonl(pro_sample, 3) + hand_written_tasks()
    uniform_target(root / "target.json")
    write_release(root / "rel", name="tamper", version="v1", splits=small_release_splits(tasks, seed=1),
                  target_path=root / "target.json", provenance={"source": {"benchmark": "test"}})
    assert verify_release(root / "rel").ok
    return root / "rel"
