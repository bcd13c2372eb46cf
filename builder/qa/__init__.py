"""Repository-QA mining: questions with reference answers, evidence and proof scripts from solving trajectories."""

from .generate import STAGE_GENERATE, STAGE_REVIEW, generate_questions, generation_messages, review_messages
from .leakage import PatchFacts, evidence_problems, leaks, patch_facts
from .trajectory import Trajectory, find_trajectory, read_trajectory

__all__ = ["STAGE_GENERATE", "STAGE_REVIEW", "PatchFacts", "Trajectory", "evidence_problems", "find_trajectory",
           "generate_questions", "generation_messages", "leaks", "patch_facts", "read_trajectory", "review_messages"]
