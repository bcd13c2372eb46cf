"""Adapters behind protocols: each adapter the registries hand out satisfies its seam's protocol."""

from __future__ import annotations

import inspect
import subprocess
import sys

from builder.classify.base import Classifier
from builder.proofs.config import SANDBOXES
from builder.proofs.run import SANDBOX_ADAPTERS, Sandbox
from builder.sources import TaskSource, load_tasks
from builder.split import SPLITTERS, Splitter, get_splitter


def test_every_resolved_sandbox_has_an_adapter():
    assert set(SANDBOX_ADAPTERS) == set(SANDBOXES) - {"auto"}
    for name, adapter in SANDBOX_ADAPTERS.items():
        assert isinstance(adapter, Sandbox) and adapter.name == name


def test_structural_splitter_is_a_splitter():
    assert "structural" in SPLITTERS
    assert isinstance(get_splitter("structural"), Splitter)


def test_load_tasks_has_the_task_source_signature():
    want = inspect.signature(TaskSource.__call__).parameters
    got = inspect.signature(load_tasks).parameters
    assert list(got) == [p for p in want if p != "self"]


def test_classifier_protocol_is_runtime_checkable():
    class Fake:
        info: dict = {}

        def predict(self, texts):
            return []

    assert isinstance(Fake(), Classifier) and not isinstance(object(), Classifier)


def test_adapters_keep_heavy_dependencies_lazy():
    """Importing the seams loads no docker SDK, torch or transformers: only running an adapter does."""
    code = ("import sys, builder.proofs.run, builder.split, builder.classify, builder.llm, builder.sources; "
            "print(sorted(m for m in ('docker', 'torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
