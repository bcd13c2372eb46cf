"""The split stage's item cache is keyed by the splitter's code as well as its info: a structural splitter whose
rules changed (same name, same config) must not reuse items split by the old rules."""

from __future__ import annotations

import importlib.util
import sys
from types import SimpleNamespace

from builder.json_cache import JsonCache
from builder.pipeline.recipe import load_recipe
from builder.pipeline.stage_data import IngestOutputs
from builder.pipeline.stages import split as split_stage
from swe_taskflow.schema import SplitResult, Task

SPLITTER = '''
from swe_taskflow.schema import SplitResult


class RuleSplitter:
    info = {{"name": "rules", "model": None}}

    def split(self, task):
        return SplitResult(task.instance_id, "ineligible", reason={reason!r}, splitter=self.info,
                           original_prompt=task.original_prompt)
'''


class _Progress:
    def set_total(self, n):
        pass

    def advance(self, n=1, *, failed=0, expected=0):
        pass


def _load(path, reason):
    path.write_text(SPLITTER.format(reason=reason))
    spec = importlib.util.spec_from_file_location("rule_splitter_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.RuleSplitter()


def test_changed_splitter_code_is_not_served_from_the_item_cache(tmp_path, monkeypatch):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "t.jsonl"\n[questions]\nmode = "none"\n'
                      '[conditions]\nnames = ["single_prompt"]\n[split]\ncontext_checks = "off"\n')
    ctx = SimpleNamespace(recipe=load_recipe(recipe), progress=_Progress(), items=JsonCache(tmp_path / "items"))
    task = Task(instance_id="o__r-1", source="s", source_revision="", repo="o/r", base_commit="c",
                original_prompt="p", problem_statement="p")
    inputs = split_stage.Inputs(ingest=IngestOutputs(tasks=[task]))
    module = tmp_path / "rule_splitter.py"
    for reason in ("old rules", "new rules"):
        splitter = _load(module, reason)
        monkeypatch.setattr(split_stage, "make_splitter", lambda recipe, s=splitter: s)
        out = split_stage.run(inputs, ctx)
        assert [(s.status, s.reason) for s in out.splits] == [("ineligible", reason)]
    assert isinstance(out.splits[0], SplitResult)
