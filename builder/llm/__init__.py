"""LLM backends behind one protocol, with a content-addressed response store for exact offline replay.

Prompt templates and the JSON reply parser (:mod:`.prompts`: ``load_prompt``, ``render``, ``parse_json_object``)
are here too: the splitter, question generation, augmentation writers and the QA judge all use them."""

from .accounting import Ledger, StageUsage
from .base import BackendConfig, BaseBackend, LLMBackend, ReplayBackend
from .requests import LLMReply, LLMRequest
from .registry import BACKENDS, get_backend
from .store import ResponseStore

__all__ = ["BACKENDS", "BackendConfig", "BaseBackend", "LLMBackend", "LLMReply", "LLMRequest", "Ledger",
           "ReplayBackend", "ResponseStore", "StageUsage", "get_backend"]
