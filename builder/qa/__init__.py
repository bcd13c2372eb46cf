"""Repository-QA mining: questions with reference answers, evidence and proof scripts from solving trajectories."""

from .generate import (SKIP_KINDS, SOLVED_EXIT_STATUSES, STAGE_GENERATE, STAGE_REVIEW, PatchFacts, Trajectory,
                       evidence_problems, find_trajectory, generate_questions, generation_messages, leaks,
                       load_resolved, patch_facts, read_trajectory, review_messages, skip_kind, skipped_task,
                       solving_problem)

__all__ = ["SKIP_KINDS", "skip_kind", "STAGE_GENERATE", "STAGE_REVIEW", "SOLVED_EXIT_STATUSES", "PatchFacts", "Trajectory", "evidence_problems",
           "find_trajectory", "generate_questions", "generation_messages", "leaks", "load_resolved", "patch_facts",
           "read_trajectory", "review_messages", "skipped_task", "solving_problem"]
