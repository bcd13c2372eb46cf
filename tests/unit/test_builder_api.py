"""The builder's public module ``builder.api`` (issue 33, section 2): its names change only with CHANGELOG.md's
"Builder public API" list, one spelling of the release and output arguments, frozen results, errors from the
project's root, and the CLI as a thin caller (no workflow of the calls left in ``builder/cli/``)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from swe_taskflow.errors import ConfigError, InputError, TaskflowError
from test_public_api import assert_listed

ROOT = Path(__file__).resolve().parents[2]
CALLS = ("build", "export_harbor", "import_jobs", "push", "reprove", "classify", "agreement", "select")
RESULTS = ("Built", "Exported", "Imported", "Pushed", "Reproved", "Classified", "Skipped", "Judge", "Agreement",
           "Selected")


def test_builder_api_matches_the_changelog():
    from builder import api

    assert_listed("Builder public API", api.__all__, "builder.api")


def test_every_name_is_defined_in_the_module_and_the_six_calls_are_there():
    from builder import api

    assert set(CALLS) | set(RESULTS) <= set(api.__all__)
    for name in api.__all__:
        value = getattr(api, name)
        if callable(value):
            assert value.__module__ == "builder.api", name
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_one_spelling_of_the_release_and_output_arguments():
    """``release`` and ``out`` everywhere; none of the deep modules' other spellings."""
    from builder import api

    others = {"release_path", "release_dir", "path", "recipe_path", "out_dir", "output", "repo_id", "record_dir",
              "cache_dir", "opts"}
    for name in CALLS:
        params = inspect.signature(getattr(api, name)).parameters
        assert not others & set(params), (name, sorted(others & set(params)))
    for name in ("export_harbor", "import_jobs", "push", "reprove"):
        assert "release" in inspect.signature(getattr(api, name)).parameters, name
    for name in ("build", "export_harbor", "import_jobs", "classify", "select"):
        assert "out" in inspect.signature(getattr(api, name)).parameters, name


def test_results_are_frozen_dataclasses():
    from builder import api

    for name in RESULTS:
        cls = getattr(api, name)
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, name
    built = api.Built(name="x", version="v1", out=Path("o"), stages=(("ingest", "ran"), ("write", "cached")))
    assert built.ran == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "y"  # type: ignore[misc]


def test_import_stays_light():
    code = ("import sys, builder.api; print(sorted(m for m in ('numpy', 'pyarrow', 'datasets', 'torch', "
            "'huggingface_hub', 'builder.pipeline', 'builder.evaluation') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_errors_come_from_the_project_root(tmp_path):
    from builder import api

    with pytest.raises(ConfigError) as exc:
        api.judge_backend(api.Judge("opnai"))
    assert "opnai" in str(exc.value) and isinstance(exc.value, TaskflowError)
    with pytest.raises(InputError):
        api.import_jobs([], tmp_path / "release", tmp_path / "out")
    with pytest.raises(TaskflowError):
        api.build(tmp_path / "no-such-recipe.toml", tmp_path / "out", dry_run=True)


def test_classify_labels_reports_skipped_and_refuses_nothing_to_label(tmp_path, monkeypatch):
    from builder import api

    monkeypatch.setenv("SWE_TASKFLOW_CACHE", str(tmp_path / "cache"))
    sessions = tmp_path / "in.jsonl"   # provenance: hand-written for this test
    sessions.write_text(json.dumps({"session_id": "s1", "messages": [{"text": "add a logout button"},
                                                                      {"text": "run the tests"}]}) + "\n"
                        + json.dumps({"session_id": "s2", "messages": []}) + "\n", encoding="utf-8")
    heard = []
    done = api.classify(sessions, tmp_path / "out.jsonl", on_skip=heard.append)
    assert (done.labelled, done.sessions, done.classifier) == (2, 1, "embedded")
    assert [s.session_id for s in done.skipped] == [s.session_id for s in heard] == ["s2"]
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [m["intent"] for m in rows[0]["messages"]] == ["new-feature", "execute"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"session_id": "s2", "messages": []}) + "\n", encoding="utf-8")
    with pytest.raises(InputError):
        api.classify(empty, tmp_path / "out2.jsonl")


#: What the CLI may no longer import for the calls: the deep modules whose workflows builder.api assembles.
DEEP = ("builder.pipeline.build", "builder.evaluation.export", "builder.evaluation.importer",
        "builder.evaluation.scoring", "builder.release.push", "builder.proofs", "builder.proofs.config",
        "builder.llm", "builder.classify", "builder.classify.scale", "builder.sources", "builder.resources")
#: The command functions of the calls, by CLI module.
COMMANDS = {"build.py": ("run",), "evaluate.py": ("cmd_export_harbor", "cmd_evaluate_import"),
            "release.py": ("cmd_verify", "cmd_push"), "classify.py": ("run", "run_classify", "run_agreement"),
            "select.py": ("run",)}


def _imports(node: ast.AST) -> set[str]:
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.ImportFrom):
            base = "builder" if n.level == 2 else ("builder.cli" if n.level == 1 else "")
            mod = ".".join(p for p in (base, n.module or "") if p)
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in n.names)
        elif isinstance(n, ast.Import):
            found.update(a.name for a in n.names)
    return found


def test_the_cli_is_a_thin_caller_of_builder_api():
    for file, funcs in COMMANDS.items():
        tree = ast.parse((ROOT / "builder" / "cli" / file).read_text(encoding="utf-8"))
        defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        for func in funcs:
            used = _imports(defs[func])
            deep = sorted(u for u in used if u in DEEP)
            assert not deep, f"builder/cli/{file}:{func} assembles a workflow itself: imports {deep}"
            assert "builder.api" in used or func == "run" and file == "classify.py", f"{file}:{func}"
        module_level = _imports(ast.Module(body=[n for n in tree.body if not isinstance(n, ast.FunctionDef)],
                                           type_ignores=[]))
        assert not sorted(u for u in module_level if u in DEEP), file


def _labelled(path: Path, rows: list[tuple[str, list[tuple[str, str]]]]) -> Path:
    path.write_text("".join(json.dumps({"session_id": sid, "messages": [{"text": t, "intent": i} for t, i in msgs]})
                            + "\n" for sid, msgs in rows), encoding="utf-8")
    return path


def test_agreement_counts_as_an_independent_tally_and_writes_what_the_cli_writes(tmp_path, capsys):
    """[hand-written labels] ``api.agreement`` against a plain count of equal labels, and the same JSON as
    ``classify agreement --json``; files over other messages or other texts are refused."""
    from builder import api
    from builder.cli import main

    texts = [("add a flag", "new-feature"), ("why does it crash", "debug"), ("run the tests", "execute"),
             ("thanks", "greeting")]
    other = ["new-feature", "bug-fix", "execute", "other"]
    a = _labelled(tmp_path / "a.jsonl", [("s1", texts[:2]), ("s2", texts[2:])])
    b = _labelled(tmp_path / "b.jsonl", [("s1", [(t, i) for (t, _), i in zip(texts[:2], other[:2])]),
                                         ("s2", [(t, i) for (t, _), i in zip(texts[2:], other[2:])])])
    done = api.agreement([a, b], tmp_path / "api.json")
    assert (done.messages, done.sessions, len(done.pairs)) == (4, 2, 1)
    assert done.mean_exact == done.pairs[0].exact == sum(x[1] == y for x, y in zip(texts, other)) / 4 == 0.5
    assert done.pairs[0].confusion.sum() == 4
    assert main(["classify", "agreement", str(a), str(b), "--json", str(tmp_path / "cli.json")]) == 0
    assert "mean pairwise exact agreement 0.500" in capsys.readouterr().out
    assert (tmp_path / "api.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert json.loads((tmp_path / "api.json").read_text()) == done.document
    short = _labelled(tmp_path / "c.jsonl", [("s1", texts[:2])])
    with pytest.raises(InputError, match="same messages"):
        api.agreement([a, short])
    changed = _labelled(tmp_path / "d.jsonl", [("s1", [("add two flags", "new-feature"), texts[1]]),
                                               ("s2", texts[2:])])
    with pytest.raises(InputError, match="text differs"):
        api.agreement([a, changed])
    with pytest.raises(InputError, match="two or more"):
        api.agreement([a])
