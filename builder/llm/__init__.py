"""LLM backends behind one protocol, with a content-addressed response store for exact offline replay."""

from .accounting import Ledger, StageUsage
from .base import BackendConfig, BaseBackend, LLMBackend, ReplayBackend
from .requests import LLMReply, LLMRequest
from .registry import BACKENDS, get_backend
from .store import ResponseStore

__all__ = ["BACKENDS", "BackendConfig", "BaseBackend", "LLMBackend", "LLMReply", "LLMRequest", "Ledger",
           "ReplayBackend", "ResponseStore", "StageUsage", "get_backend"]
