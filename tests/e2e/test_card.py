"""Every sentence and number of the example's dataset card, checked against the data as a consumer sees it.

The example recipe is built, two hand-written trajectories are imported (so the card has a
``trajectories`` config), every split of both configs is loaded with ``datasets.load_dataset`` offline,
and each claim of the card is recomputed here with plain Python from those rows, the target file and
the manifest. Each checked span is then blanked out; at the end no digit may be left in the card's
prose outside a short list of fixed method constants, so a new number cannot slip in unchecked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from builder.pipeline.build import build
from builder.release.card import UNSET_REPO
from builder.release.trajectories import add_trajectories, import_trajectories
from swe_taskflow.citations import source_info
from swe_taskflow.features import session_features
from swe_taskflow.turns.stress import is_stress_split
from swe_taskflow.typed_records import JSON_TEXT_FIELDS
from swe_taskflow.verify_checks import read_front_matter, split_tfas
from swe_taskflow.visibility import HIDDEN_REASONS, hidden_fields, visible_fields
from tests.support.stress_card import stress_spans

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
#: Digits the prose may hold without a data check: the method's fixed constants and the format names.
STATIC = ("RFC 8785", "SHA-256", "(base 2)", "TFAS = 100 x (S_L x S_T x S_R)^(1/3)", "S_k = 1 - JSD", "START/END", "sha256")


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    """The built example with two imported trajectories, loaded through ``load_dataset`` offline."""
    import datasets
    tmp = tmp_path_factory.mktemp("card")
    outcome = build(ROOT / "builder/releases/example.toml", tmp / "out", quiet=True)
    release = outcome.release
    rows = import_trajectories(release, [_atif(tmp, release, n) for n in range(2)], condition="split_prompt")
    add_trajectories(release, rows)
    old = datasets.config.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = True
    try:
        card = (release / "README.md").read_text(encoding="utf-8")
        meta = read_front_matter(card, where="README.md")
        split_names = [d["split"] for d in meta["configs"][0]["data_files"]]
        splits = {s: datasets.load_dataset(str(release), split=s, cache_dir=str(tmp / "hf")).to_list()
                  for s in split_names}
        traj_cfg = next(c for c in meta["configs"] if c["config_name"] == "trajectories")
        trajs = {d["split"]: datasets.load_dataset(str(release), "trajectories", split=d["split"],
                                                   cache_dir=str(tmp / "hf")).to_list() for d in traj_cfg["data_files"]}
    finally:
        datasets.config.HF_HUB_OFFLINE = old
    manifest = json.loads(next((release / "manifests").glob("*.json")).read_text())
    target = json.loads((release / manifest["target"]["path"]).read_text())
    return release, card, meta, splits, trajs, manifest, target


def _atif(tmp: Path, release: Path, n: int) -> Path:
    import pyarrow.parquet as pq
    iid = pq.read_table(release / "data/split_prompt-00000-of-00001.parquet").to_pylist()[n]["instance_id"]
    doc = {"schema_version": "ATIF-v1.4", "agent": {"name": "hand-written", "version": "0", "model_name": "hw-model"},
           "notes": "hand-written fixture, not a real agent run",
           "steps": [{"step_id": 1, "source": "user", "message": "[hand-written] task"},
                     {"step_id": 2, "source": "agent", "message": "[hand-written] done",
                      "metrics": {"prompt_tokens": 10 + n, "completion_tokens": 3, "cost_usd": 0.001}}],
           "extra": {"instance_id": iid, "exit_status": "Submitted"}}
    path = tmp / f"traj{n}.json"
    path.write_text(json.dumps(doc))
    return path


class Card:
    """The card's prose with checked spans blanked out as the test goes."""

    def __init__(self, text: str) -> None:
        body = text.split("\n---\n", 1)[1]                 # the YAML header is checked on its own
        self.code = re.findall(r"```\w*\n(.*?)```", body, flags=re.S)
        self.text = re.sub(r"```\w*\n.*?```", "", body, flags=re.S)

    def take(self, span: str) -> None:
        assert span in self.text, f"the card does not say: {span!r}"
        self.text = self.text.replace(span, " ", 1)

    def find(self, pattern: str) -> list[re.Match]:
        return list(re.finditer(pattern, self.text))

    def leftover_digits(self) -> list[str]:
        text = self.text
        for s in STATIC:
            text = text.replace(s, "")
        return [line for line in text.splitlines() if re.search(r"\d", line)]


def _counts(c: Counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def _bucket(n: int) -> str:
    return "n<1K" if n < 1000 else "1K<n<10K" if n < 10_000 else "10K<n<100K" if n < 100_000 else "100K<n<1M"


def test_every_sentence_and_number_of_the_card_matches_the_data(consumer):
    release, text, meta, splits, trajs, manifest, target = consumer
    card = Card(text)
    tasks: dict[str, dict] = {}
    for rows in splits.values():
        for r in rows:
            tasks.setdefault(r["instance_id"], r)
    n_tasks, total = len(tasks), sum(len(r) for r in splits.values())

    # YAML header
    assert meta["size_categories"] == [_bucket(total)]
    assert meta["source_datasets"] == ["extended|ScaleAI/SWE-bench_Pro"]
    assert "swe-bench-pro" in {r["source"] for r in tasks.values()}
    assert meta["license"] == manifest["release"]["license"] and meta["pretty_name"] == manifest["name"]

    # title, description, summary
    card.take(f"# {manifest['name']} ({manifest['version']})")
    desc = manifest["release"]["description"]      # the recipe's own words: its numbers must be counts
    counts = {n_tasks, len(splits), *Counter(r["source"] for r in tasks.values()).values()}
    assert all(int(x) in counts for x in re.findall(r"\d+", desc)), (desc, counts)
    card.take(desc)
    langs = Counter(r["repo_language"] for r in tasks.values())
    stress = [s for s in splits if is_stress_split(s)]       # stress-test slices: their own section, checked below
    apart = (f" ({len(splits) - len(stress)} calibrated, {len(stress)} stress-test slice"
             f"{'' if len(stress) == 1 else 's'} shown apart)") if stress else ""
    card.take(f"This release holds {n_tasks} tasks from {len({r['repo'] for r in tasks.values()})} repositories "
              f"(languages: {_counts(langs)}) in {len(splits)} splits of config `default`{apart}, {total} rows in all.")
    by_source = Counter((r["source"], r["source_revision"]) for r in tasks.values())
    for (src, rev), n in by_source.items():
        info = source_info(src)
        card.take(f"{n} tasks come from `{src}` revision `{rev}`"
                  + (f" ({info['name']}, {info['license']}, {info['copyright']})" if info else "") + ".")
    assert by_source[("swe-bench-pro", manifest["provenance"]["source"]["revision"])] > 0

    # coverage of tasks per split: the calibrated splits (stress-test slices are shown apart)
    calibrated = {s: rows for s, rows in splits.items() if not is_stress_split(s)}
    order = list(dict.fromkeys(r["instance_id"] for rows in calibrated.values() for r in rows))
    n_core = len(order)
    full = [s for s, rows in calibrated.items() if [r["instance_id"] for r in rows] == order]
    partial = [s for s in calibrated if s not in full]
    same = "(compare rows across splits by `source_task_sha256`)"
    if partial:
        card.take(f"{len(full)} of the {len(calibrated)} splits hold all {n_core} tasks in the same order {same}: "
                  + ", ".join(f"`{s}`" for s in full) + ".")
    else:
        card.take(f"All {len(calibrated)} splits hold the same {n_core} tasks in the same order {same}.")
    for s in partial:
        ids = [r["instance_id"] for r in splits[s]]
        assert ids == [i for i in order if i in ids]                     # same order
        carrying = {f: [r["instance_id"] for r in splits[f] if any(t["kind"] != "issue" for t in r["turns"])]
                    for f in full}
        first = next(f for f in full if carrying[f] == ids)
        card.take(f"`{s}` holds {len(ids)} of the {n_core} tasks, in the same order: exactly the tasks whose row "
                  f"in `{first}` carries an answer turn.")

    # the per-split table
    ref = {r["instance_id"]: [(t["kind"], t["text"]) for t in r["turns"]] for r in splits["split_prompt"]}
    for s, rows in calibrated.items():
        answers = Counter(t["kind"] for r in rows for t in r["turns"] if t["kind"] != "issue")
        n_turns = [len(r["turns"]) for r in rows]
        eq = "-" if s == "split_prompt" else str(sum(ref.get(r["instance_id"]) == [(t["kind"], t["text"])
                                                                                 for t in r["turns"]] for r in rows))
        cells = [f"`{s}`", rows[0]["condition"], rows[0]["question_pool"] or "-", str(len(rows)),
                 str(sum(1 for r in rows if any(t["kind"] != "issue" for t in r["turns"]))),
                 _counts(answers) or "-", str(len({q["question_id"] for r in rows for q in r["questions"]})),
                 f"{sum(n_turns)} ({min(n_turns)}-{max(n_turns)})",
                 str(sum(r["split_status"] == "ok" for r in rows)), eq]
        card.take("| " + " | ".join(cells) + " |")
    qkinds = Counter({q["question_id"]: q["kind"] for rows in calibrated.values() for r in rows
                      for q in r["questions"]}.values())
    card.take(f"The calibrated splits above hold {sum(qkinds.values())} distinct questions "
              f"(by kind: {_counts(qkinds)}).")
    authors = Counter({q["question_id"]: q["generator"]["name"] for rows in splits.values() for r in rows
                       for q in r["questions"]}.values())
    scope = ("every split, the stress-test slices' items included" if any(s.startswith("stress_") for s in splits)
             else "every split")      # two scopes, each said (issue 36: 18 distinct beside authors adding to 20)
    card.take(f"Question authors over {scope} (`questions[].generator`, {sum(authors.values())} distinct "
              "questions): " + ", ".join(f"`{k}` {v}" for k, v in sorted(authors.items())) + ".")
    qr = manifest["provenance"].get("question_rows")
    if qr:    # the build's record of which tasks carry questions, checked against the rows
        qids: dict[str, set] = {}
        for rows in splits.values():
            for r in rows:
                qids.setdefault(r["instance_id"], set()).update(q["question_id"] for q in r["questions"]
                                                                if q["kind"] == "qa")   # the QA pool's record
        card.take(f"Which rows carry questions: {qr['rule']}.")
        for t in qr["tasks_with_candidates"]:
            assert t["accepted"] == len(qids.get(t["instance_id"], ()))
            assert sum(t["rejected_by_reason"].values()) == t["candidates"] - t["accepted"]
            rejected = Counter(t["rejected_by_reason"])
            card.take(f"- `{t['instance_id']}` ({t['provenance']}): {t['accepted']} of {t['candidates']} candidate "
                      "questions accepted" + (f"; rejected: {_counts(rejected)}" if rejected else "") + ".")
        assert sum(qr["tasks_without_questions"].values()) == sum(1 for i in order if not qids.get(i))
        for reason, n in qr["tasks_without_questions"].items():
            card.take(f"- {n} tasks carry no question: {reason}.")
    for span in stress_spans(manifest, splits):      # the stress-test slices' section, from the rows and manifest
        card.take(span)
    if manifest["provenance"]["models"]["proofs"].get("repos") == "stand-in":
        card.take("Proof scripts ran against a stand-in repository")

    # the target Task Flow, from the published target file
    card.take(f"- file: `{manifest['target']['path']}` (sha256 `{manifest['target']['sha256']}`)")
    assert manifest["target"]["sha256"] == hashlib.sha256((release / manifest["target"]["path"]).read_bytes()).hexdigest()
    card.take(f"- session filter: at least {target['session_filter']['min_messages']} user messages")
    card.take("- sample: " + ", ".join(f"{v} {k}" for k, v in sorted(target["sample_size"].items())))
    card.take("- classifier: " + ", ".join(f"{k}={v}" for k, v in sorted(target["classifier"].items())))
    if target.get("correction"):                     # a target corrected for its classifier's errors says so
        c = target["correction"]
        card.take(f"- labels: **corrected** for the classifier's errors: the expected flow of the true intents given "
                  f"its confusion matrix on {c['n_labelled']} held-out labelled messages "
                  f"(`{c['confusion_file']}`, sha256 `{c['confusion_sha256']}`)")
    card.take(f"Calibrated to **{target['name']}** (provisional stand-in): {target['population']}.")
    card.take(target["description"])
    card.take("| length bin | " + " | ".join(target["length_bins"]) + " |")
    card.take("| P_L | " + " | ".join(f"{100 * x:.1f}%" for x in target["P_L"]) + " |")
    top = sorted(zip(target["intents"], target["P_T"]), key=lambda kv: (-kv[1], kv[0]))
    card.take("Task types (P_T): " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in top if v > 0) + ".")
    assert not any(isinstance(v, str) and len(v) > 2000 for v in target.values())   # aggregates only

    # TFAS recomputed from the loaded rows and the published target
    from swe_taskflow.target import load_target
    tgt = load_target(release / manifest["target"]["path"])
    # ... and beside it, how each split's candidates were chosen: the rule the recipe gives, as recorded
    from builder.pipeline.recipe import load_recipe
    from builder.pipeline.recipe import split_rules
    rules = split_rules(load_recipe(ROOT / "builder/releases/example.toml"))
    for s, rows in calibrated.items():
        t = split_tfas(tgt, rows)
        assert manifest["provenance"]["selection"][s] == rules[s]
        card.take(f"| `{s}` | {rows[0]['condition']} | {rows[0]['question_pool'] or '-'} | {len(rows)} | "
                  f"{t['tfas']:.2f} | {t['S_L']:.3f} | {t['S_T']:.3f} | {t['S_R']:.3f} | {rules[s]} |")

    # loading: every split of both configs, the repository id (none set yet: said so)
    load = card.code[0]
    for s in splits:
        assert f'{s} = load_dataset("{UNSET_REPO}", split="{s}")' in load
    for s in trajs:
        assert f'traj_{s} = load_dataset("{UNSET_REPO}", "trajectories", split="{s}")' in load
    assert len(re.findall(r"= load_dataset\(", load)) == len(splits) + len(trajs)
    card.take("No Hub repository is set for this release yet")

    # hidden / visible fields: exactly the schema's, each with its reason, and present in the loaded rows
    feats = session_features()
    row = next(r for r in splits["qa_first"] if r["questions"])
    card.take(", ".join(f"`{f}`" for f in visible_fields(feats)))
    for f in hidden_fields(feats):
        top_key, _, sub = f.partition("[].")
        assert top_key in row and (not sub or all(sub in x for x in row[top_key]))
        card.take(f"- `{f}`: {HIDDEN_REASONS[f]}")
    assert set(visible_fields(feats)) | set(hidden_fields(feats)) >= {k for k in row if k not in ("turns", "questions")}

    # JSON text fields: exactly the listed ones hold JSON objects in the data; no other string field does
    json_paths = _json_string_paths({"default": [r for rows in splits.values() for r in rows],
                                     "trajectories": [r for rows in trajs.values() for r in rows]})
    assert json_paths <= set(JSON_TEXT_FIELDS) and "questions[].proof_report.extra" in json_paths
    for k, why in JSON_TEXT_FIELDS.items():
        card.take(f"- `{k}`: {why}")

    # files, hashes, provenance
    for s in manifest["splits"]:
        hashes = [r["row_sha256"] if s["config"] == "default" else r["trajectory_sha256"]
                  for r in (splits if s["config"] == "default" else trajs)[s["name"]]]
        assert s["sha256"] == hashlib.sha256("".join(h + "\n" for h in hashes).encode()).hexdigest()
        f = s["files"][0]
        assert f["sha256"] == hashlib.sha256((release / f["path"]).read_bytes()).hexdigest()
        card.take(f"| {s['config']} | `{s['name']}` | {len(hashes)} | `{s['sha256']}` | `{f['path']}` "
                  f"(`{f['sha256'][:12]}`) |")
    card.take(f"- manifest: `manifests/{manifest['name']}-{manifest['version']}.json`")
    prov, pkg = manifest["provenance"], manifest["package"]
    card.take(f"Built with swe-taskflow {pkg['version']} at commit `{pkg['git_commit']}`")
    src = prov["source"]
    card.take(f"- source: source `{src['source']}`, revision `{src['revision']}`, spec `{src['spec']}`, "
              f"rows `{src['rows']}`")
    assert src["rows"] == n_tasks
    card.take(f"- recipe: file `example.toml`, sha256 `{prov['recipe']['sha256']}`")
    assert prov["recipe"]["sha256"] == hashlib.sha256((ROOT / "builder/releases/example.toml").read_bytes()).hexdigest()
    c = prov["models"]["classifier"]
    card.take(f"- classifier: name `{c['name']}`, revision `{c['revision']}`, version `{c['version']}`, "
              f"prompt_sha256 `{c['prompt_sha256']}`")
    card.take(f"- splitter: name `{prov['models']['splitter']['name']}`")
    card.take(f"- target: `{manifest['target']['path']}` sha256 `{manifest['target']['sha256']}`")
    p = prov["models"]["proofs"]
    card.take(f"- proofs: sandbox `{p['sandbox']}`, image `{p['image']}`, image_id `{p['image_id']}`, "
              f"repos `{p['repos']}`, gold_patch `{p['gold_patch']}`")
    card.take("- seeds: " + ", ".join(f"{k} `{v}`" for k, v in sorted(prov["seeds"].items())))
    install, command = card.code[1].strip().splitlines()[-2:]   # what works today: a clone, not an index
    assert ".venv/bin/pip install ." in install and not any("pip install swe-taskflow" in c for c in card.code)
    assert command == f".venv/bin/swe-taskflow verify {UNSET_REPO}"

    # citation: the paper and the source benchmark the rows name; license and attribution
    bib = card.code[2]
    assert "eprint        = {2610.09633}" in bib and "{SWE-Bench Pro}" in bib and bib.count("@") == 2
    card.take(f"Released under `{meta['license']}`.")
    for (src, _), n in sorted(by_source.items()):
        if source_info(src):
            card.take(f"The texts of {n} tasks derive from SWE-Bench Pro (MIT, Copyright (c) Scale AI, Inc).")

    left = card.leftover_digits()
    assert not left, "numbers in the card that no check covers:\n" + "\n".join(left)


def _json_string_paths(configs: dict[str, list[dict]]) -> set[str]:
    """Paths (``questions[].proof_report.extra`` style) of string fields whose values are JSON objects."""
    found: set[str] = set()

    def walk(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}.{k}" if path else k)
        elif isinstance(value, list):
            for v in value:
                walk(v, f"{path}[]")
        elif isinstance(value, str) and value[:1] in "{[":
            try:
                json.loads(value)
            except json.JSONDecodeError:
                return
            found.add(path.replace("[].", "[]."))

    for rows in configs.values():
        for r in rows:
            walk(r, "")
    return found
