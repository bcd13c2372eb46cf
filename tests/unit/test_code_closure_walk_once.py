"""Keying every stage walks each module's syntax tree for imports once, not once per stage closure that holds it
(issue 36, build time: 742 walks for about 100 modules in the example's build)."""

from __future__ import annotations

from collections import Counter

from builder.pipeline.code_closure import CodeBase


def test_each_module_is_walked_once(monkeypatch):
    cb = CodeBase.installed()
    walked: Counter = Counter()
    walk = CodeBase._walk_imports

    def counting(self, mod):
        walked[mod.name] += 1
        return walk(self, mod)

    monkeypatch.setattr(CodeBase, "_walk_imports", counting)
    a = cb.closure("builder.pipeline.stages.classify_prompts")
    b = cb.closure("builder.pipeline.stages.classify_turns")
    assert set(a) & set(b) and walked and max(walked.values()) == 1
    assert cb.imports_of("builder.pipeline.stages.classify_prompts") == \
        CodeBase(cb.root)._imports(cb._find("builder.pipeline.stages.classify_prompts"))
