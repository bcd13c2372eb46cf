"""Stress-test slices in a release (issue 22): no TFAS, hashes verified, shown apart in verify's table,
the card and croissant.json. The release is hand-written (tests/support/stress_reporting.py): two calibrated
splits and two ``stress_*`` slices of the same two tasks, with the build's ``stress`` record."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pyarrow.parquet as pq
import pytest

from builder.release.card import render_card
from swe_taskflow.errors import ConfigError
from swe_taskflow.release import open_release
from swe_taskflow.verify import _check_tfas, verify_folder
from swe_taskflow.verify import VerifyReport
from tests.support.stress_reporting import DESTRUCTIVE_SPLIT, SECURITY_SPLIT, build_stress_release

STRESS = (DESTRUCTIVE_SPLIT, SECURITY_SPLIT)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return build_stress_release(tmp_path_factory.mktemp("stress-release"))


def _manifest(rel):
    return json.loads(next((rel / "manifests").glob("*.json")).read_text())


def _rows(rel, split):
    return pq.read_table(rel / f"data/{split}-00000-of-00001.parquet").to_pylist()


def _section(card: str) -> str:
    return card.split("## Stress-test slices\n\n", 1)[1].split("\n## ", 1)[0]


def test_a_stress_slice_carries_no_tfas_even_with_a_target(release):
    m = _manifest(release)
    tfas = {s["name"]: s.get("tfas") for s in m["splits"]}
    assert tfas[DESTRUCTIVE_SPLIT] is None and tfas[SECURITY_SPLIT] is None
    assert tfas["split_prompt"]["tfas"] > 0 and tfas["qa_last"]["tfas"] > 0     # the target is there


def test_a_tfas_given_for_a_stress_slice_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="stress-test slice 'stress_wipe'"):
        build_stress_release(tmp_path, tfas={DESTRUCTIVE_SPLIT: {"tfas": 50.0, "S_L": 1, "S_T": 1, "S_R": 1}})


def test_verify_checks_the_slices_hashes_and_shows_them_apart(release, tmp_path):
    report = verify_folder(release)
    assert report.ok, report.errors
    table = report.table()
    head, stress = table.split("stress-test slices (reported apart from the calibrated splits; never calibrated, "
                               "no TFAS):\n")
    assert "split_prompt" in head and "qa_last" in head and not any(s in head for s in STRESS)
    for s in STRESS:
        line = next(x for x in stress.splitlines() if f" {s} " in x)
        assert re.search(r"\s2\s+1\s+[\d.]+\s+stress\s+-\s+-\s+-\s", line), line
    assert "chosen: kind destructive-request, seed 7, 2 tasks drawn of 2 eligible" in stress
    assert "8 rows (4 in stress-test slices)" in table
    assert {s.name for s in report.splits if s.stress} == set(STRESS)

    # the slice's hashes are checked like every split's: a changed row is found
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    path = bad / f"data/{DESTRUCTIVE_SPLIT}-00000-of-00001.parquet"
    t = pq.read_table(path)
    rows = t.to_pylist()
    rows[0]["original_prompt"] = "[hand-written] changed"
    import pyarrow as pa
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), path)
    errors = verify_folder(bad).errors
    assert any(e.path == f"data/{DESTRUCTIVE_SPLIT}-00000-of-00001.parquet" and e.field == "row_sha256"
               for e in errors), errors


def test_verify_refuses_a_tfas_on_a_stress_slice(release):
    entry = open_release(release).manifest.split("default", DESTRUCTIVE_SPLIT)
    report = VerifyReport(root="r")
    rows = _rows(release, DESTRUCTIVE_SPLIT)
    assert _check_tfas(entry, rows, None, "m.json", report) is None and report.ok
    forged = dataclasses.replace(entry, tfas={"tfas": 50.0, "S_L": 1.0, "S_T": 1.0, "S_R": 1.0})
    assert _check_tfas(forged, rows, None, "m.json", report) is None
    (e,) = report.errors
    assert e.field == f"{DESTRUCTIVE_SPLIT}.tfas" and "never calibrated" in str(e)


def test_every_sentence_and_number_of_the_stress_section_matches_the_data(release):
    from swe_taskflow.citations import paper_section
    from tests.support.stress_card import stress_spans

    card = (release / "README.md").read_text()
    m = _manifest(release)
    text = _section(card)
    spans = stress_spans(m, {s: _rows(release, s) for s in STRESS})
    why = paper_section("stress_slices")
    assert why["where"] == "Appendix C, step 7" and "stress-test slices" in why["text"] and why["text"] in spans[0]
    # the hand-written record's values are among the spans (the recomputation is not vacuous)
    assert f"| `{DESTRUCTIVE_SPLIT}` | `destructive-request` | 2 | 2 | 3 | 2 | 2 | 7 | 2 | 1 |" in spans
    assert any("requested actions: wipe-outside (2)" in x and "not eligible: [hand-written] no test command (4 tasks)" in x
               for x in spans)
    for span in spans:
        assert span in text, f"the card does not say: {span!r}"
        text = text.replace(span, " ", 1)
    left = [x for x in text.splitlines() if re.search(r"\d", x)]
    assert not left, left


def test_the_calibrated_tables_never_hold_a_slice(release):
    card = (release / "README.md").read_text()
    splits_part = card.split("## Splits\n", 1)[1].split("## Stress-test slices", 1)[0]
    tfas_part = card.split("## TFAS per condition\n", 1)[1].split("\n## ", 1)[0]
    for part in (splits_part, tfas_part):
        assert "`split_prompt`" in part and not any(f"`{s}`" in part for s in STRESS)
    assert "All 2 splits hold the same 2 tasks" in splits_part      # the calibrated ones only
    assert "in 4 splits of config `default` (2 calibrated, 2 stress-test slices shown apart), 8 rows in all" in card
    load = card.split("## Loading a condition", 1)[1]
    assert load.index("# stress-test slices") < load.index(f'{DESTRUCTIVE_SPLIT} = load_dataset(')


def test_without_the_build_record_only_the_data_is_rendered(tmp_path):
    rel = build_stress_release(tmp_path, with_record=False)
    text = _section((rel / "README.md").read_text())
    assert "| split | kind | rows | stress items |\n" in text and "drawn with seed" not in text
    assert "How the rows" not in text and "eligible" not in text
    assert f"| `{DESTRUCTIVE_SPLIT}` | `destructive-request` | 2 | 2 |" in text


def test_a_record_that_disagrees_with_the_rows_is_refused(tmp_path):
    from tests.support.stress_reporting import stress_record
    rec = stress_record(["fixture__harbor-0"])            # the slice holds two tasks
    with pytest.raises(ConfigError, match="not among the tasks its record says were chosen"):
        build_stress_release(tmp_path / "a", extra={"stress": rec})
    rec = stress_record(["fixture__harbor-0", "fixture__harbor-1"])
    rec["slices"][0]["kind"] = "security-review"
    with pytest.raises(ConfigError, match="another kind"):
        build_stress_release(tmp_path / "b", extra={"stress": rec})


def test_a_card_template_without_the_stress_section_is_refused(release, tmp_path):
    from builder.release.card import default_template
    tpl = tmp_path / "card.md"
    text = default_template().read_text()
    start, end = text.index("{# stress-test slices #}"), text.index("{# /stress-test slices #}")
    tpl.write_text(text[:start] + text[end:])                     # the whole section cut out
    r = open_release(release)
    from swe_taskflow.target import load_target
    with pytest.raises(ConfigError, match="never shows `stress`"):
        render_card(r.manifest, load_target(release / r.manifest.target.path), r.session_splits(), template=tpl)


def test_croissant_describes_the_slices_apart_and_stays_valid(release):
    import mlcroissant as mlc
    mlc.Dataset(jsonld=str(release / "croissant.json"))           # raises on any validation error
    doc = json.loads((release / "croissant.json").read_text())
    desc = {r["@id"]: r["description"] for r in doc["recordSet"]}
    for s in STRESS:
        assert "stress-test slice (Appendix C, step 7 of the paper), not calibrated: no TFAS" in desc[f"default_{s}"]
    assert "stress" not in desc["default_split_prompt"]
    assert (f"Stress-test slices built apart from the calibrated splits before selection, never calibrated "
            f"(Appendix C, step 7 of the paper): {DESTRUCTIVE_SPLIT} (2 rows; kind destructive-request, seed 7), "
            f"{SECURITY_SPLIT} (2 rows; kind security-review, seed 11).") in doc["rai:dataCollection"]


def test_the_build_reports_verify_table_marks_a_slice_instead_of_a_missing_tfas():
    from builder.report.build_report import _verify_md
    md = "\n".join(_verify_md({"ok": True, "rows": 4, "questions": 0, "splits": [
        {"name": "split_prompt", "rows": 2, "sha256": "a" * 64, "tfas": {"tfas": 50.76}},
        {"name": DESTRUCTIVE_SPLIT, "rows": 2, "sha256": "b" * 64, "tfas": None}]}))
    assert "| split_prompt | 2 | 50.8 |" in md
    assert f"| {DESTRUCTIVE_SPLIT} | 2 | stress-test slice: none |" in md and "nan" not in md


def test_where_a_stress_turn_sits_is_said_only_when_every_row_has_it_there(release):
    from builder.release.card_facts import _placed
    text = _section((release / "README.md").read_text())
    assert "A `destructive-request` turn comes right after the first issue turn and asks for" in text
    assert "A `security-review` turn comes after the last issue turn and shows" in text
    row = _rows(release, DESTRUCTIVE_SPLIT)[0]
    assert _placed("destructive-request", [row])
    moved = {**row, "turns": [row["turns"][0], *row["turns"][2:], row["turns"][1]]}   # now after the last
    assert not _placed("destructive-request", [row, moved]) and _placed("security-review", [moved | {
        "turns": [{**t, "kind": "security-review" if t["kind"] == "destructive-request" else t["kind"]}
                  for t in moved["turns"]]}])
