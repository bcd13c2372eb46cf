"""The build report: one Markdown page and one HTML page a maintainer reads after a build.

Sankey diagrams of the source benchmark, the target and each condition; TFAS with its three
components per condition (the shape of the paper's Table 2); the gap tables; counts per status
(tasks kept, split-ineligible, questions rejected by reason); LLM use and cost; the verification
summary. Everything shown is derived from the build's content (no wall times), so the report of
two builds of the same inputs is the same.

The target is published as aggregate vectors only (no sessions), so its Sankey is drawn from
sessions *simulated* from it: lengths from its P_L (exact to one session), intents walking its transition
matrix P_R (seeded); the page says so under the picture. Every number a picture encodes is checked against
the data it claims to show (``tests/stage/test_report_pictures.py``).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from swe_taskflow.errors import FlowError
from swe_taskflow.flow import LENGTH_BINS, N_SIDE, RETAINED, count_sessions, score
from swe_taskflow.gap import gap_table, render_markdown
from swe_taskflow.markdown import table as md_table
from swe_taskflow.turns.stress import is_stress_split
from swe_taskflow.target import Target
from swe_taskflow.words import counted

#: Why the stress-test slices exist and stand apart (the report's words for the paper's Appendix C, step 7).
STRESS_WHY = ("A selection that maximizes alignment with observed frequencies pushes rare intents toward zero; the "
       "paper's Appendix C (step 7) asks that rare but consequential intents, such as destructive execution "
       "commands and security-relevant code review, be evaluated as explicit stress-test slices with their own "
       "task counts, reported separately from the calibrated core and decided before optimization. These splits "
       "are those slices: they are not in the TFAS tables above, no TFAS is computed for them, and the "
       "TFAS-optimized selection never saw them.")
#: Sessions drawn from the target's P_L and P_R for its Sankey, and the seed of that draw.
TARGET_SAMPLE = 2000
TARGET_SEED = 0


@dataclass
class ReportData:
    """What the report shows; the pipeline's report stage fills it from the stage outputs."""

    title: str
    release: Mapping[str, Any]
    target: Target
    source_sessions: Sequence[Sequence[str]]
    conditions: Mapping[str, Sequence[Sequence[str]]]
    counts: Mapping[str, Any] = field(default_factory=dict)
    selection: Mapping[str, Any] = field(default_factory=dict)
    llm: Mapping[str, Any] = field(default_factory=dict)
    verify: Mapping[str, Any] = field(default_factory=dict)
    stages: Sequence[Mapping[str, Any]] = ()
    notes: Sequence[str] = ()
    split_rules: Mapping[str, str] = field(default_factory=dict)
    """Split -> how its candidates were selected (shown beside its TFAS)."""
    question_intents: Mapping[str, Any] = field(default_factory=dict)
    """:func:`builder.report.question_intents.compare` of the release's splits."""
    #: The augment stage's summary, the with/without TFAS table and the classifier's disagreements.
    augmentations: Mapping[str, Any] = field(default_factory=dict)
    #: Reference Task Flows (``target.compare``) scored beside the source benchmark, e.g. SWE-Bench Pro's.
    references: Sequence[Target] = ()
    #: The stress stage's summary and slice records (docs/stress.md), shown apart from the calibrated core.
    stress: Mapping[str, Any] = field(default_factory=dict)


def target_length_counts(target: Target, n: int = TARGET_SAMPLE) -> list[int]:
    """Sessions per length bin (``LENGTH_BINS``) of ``n`` drawn sessions: the target's P_L times ``n``, rounded by
    largest remainder, so the picture's END and ``continues`` nodes show P_L to within one session."""
    p = np.asarray(target.flow.length, dtype=np.float64)
    p = p / p.sum()
    raw = p * n
    counts = np.floor(raw).astype(np.int64)
    for i in np.argsort(-(raw - counts), kind="stable")[: n - int(counts.sum())]:
        counts[i] += 1
    return [int(c) for c in counts]


def simulate_target_sessions(target: Target, n: int = TARGET_SAMPLE, seed: int = TARGET_SEED,
                             max_len: int = 60) -> list[list[str]]:
    """Sessions whose lengths are the target's P_L (:func:`target_length_counts`) and whose intents walk its
    transition matrix P_R (rows START + 13 intents, columns 13 + END), seeded.

    The target publishes aggregate vectors only. Walking P_R alone from START to END gave the lengths P_R implies,
    not P_L (issue 36: 10.7% of the drawn sessions ended after 3 messages where P_L says 19.6%), so each session
    first draws its length bin, then walks P_R with END masked until the bin's shortest length and forced at its
    longest (``6-10``: 6 to 10 messages; ``11+``: 11 to ``max_len``).
    """
    rng = np.random.default_rng(seed)
    mat = np.asarray(target.flow.transition, dtype=np.float64).reshape(N_SIDE, N_SIDE)
    start = end = N_SIDE - 1
    bins = [b for b, k in enumerate(target_length_counts(target, n)) for _ in range(k)]
    rng.shuffle(bins)
    out: list[list[str]] = []
    for b in bins:
        lo, hi = _bin_range(LENGTH_BINS[b], max_len)
        seq: list[str] = []
        state = start
        while len(seq) < hi:
            row = mat[state].copy()
            if len(seq) < lo:
                row[end] = 0.0
            if row.sum() <= 0:          # an intent P_R only ever ends after: go on as a session starts
                row = mat[start].copy()
                row[end] = 0.0
            nxt = int(rng.choice(N_SIDE, p=row / row.sum()))
            if nxt == end:
                break
            seq.append(RETAINED[nxt])
            state = nxt
        out.append(seq)
    return out


def _bin_range(label: str, max_len: int) -> tuple[int, int]:
    """Shortest and longest session length of a P_L bin (``"3"``, ``"6-10"``, ``"11+"``)."""
    if label.endswith("+"):
        return int(label[:-1]), max(int(label[:-1]), max_len)
    lo, _, hi = label.partition("-")
    return int(lo), int(hi or lo)


def tfas_rows(target: Target, source: Sequence[Sequence[str]],
              conditions: Mapping[str, Sequence[Sequence[str]]]) -> list[dict[str, Any]]:
    """TFAS and components per benchmark against the target, measured unfiltered (as Table 2)."""
    out = []
    for name, sessions in [("source benchmark (single prompts)", source), *conditions.items()]:
        row: dict[str, Any] = {"name": name, "sessions": len(sessions),
                               "mean_turns": round(float(np.mean([len(s) for s in sessions])), 2) if sessions else 0}
        try:
            s = score(target.flow, count_sessions(sessions).normalized())
            row.update(tfas=s.tfas, S_L=s.S_L, S_T=s.S_T, S_R=s.S_R)
        except FlowError as exc:
            row["error"] = exc.message
        out.append(row)
    return out


def reference_rows(target: Target, references: Sequence[Target]) -> list[dict[str, Any]]:
    """One row per reference flow (already aggregated: no sessions of its own here), scored like the benchmarks."""
    out = []
    for ref in references:
        s = score(target.flow, ref.flow)
        n = int((ref.sample_size or {}).get("sessions", 0))
        mean = round(float((ref.sample_size or {}).get("messages", 0)) / n, 2) if n else 0
        out.append({"name": f"reference: {ref.name}", "sessions": n, "mean_turns": mean, "tfas": s.tfas,
                    "S_L": s.S_L, "S_T": s.S_T, "S_R": s.S_R, "reference": ref.population})
    return out


def _fmt(row: Mapping[str, Any], key: str, spec: str) -> str:
    return format(row[key], spec) if key in row else "-"


#: The first column's heading of a count table whose keys are not statuses (issue 36: "Rows per condition"
#: headed its condition names "status").
_KEY_HEADS = {"Rows per condition (released)": ("condition", "rows"),
              "Rows carrying questions, per condition": ("condition", "rows with questions"),
              "Proof sandbox": ("setting", "value"), "Turn intents": ("what", "value"),
              "Evaluation-context checks": ("check", "value"), "Condition row status": ("condition", "count"),
              "Questions by task": ("task", "questions")}


def _key_head(section: str) -> tuple[str, str]:
    """The headings of a count section's table (by the section title's start; statuses by default)."""
    return next((h for k, h in _KEY_HEADS.items() if section.startswith(k)), ("status", "count"))


def _inline(values: Any) -> str:
    """A small mapping or list as words ("0: 16, 1: 1"), never raw JSON."""
    if isinstance(values, Mapping):
        return ", ".join(f"{k}: {_inline(v)}" for k, v in values.items()) or "none"
    if isinstance(values, (list, tuple)):
        return ", ".join(_inline(v) for v in values) or "none"
    return str(values)


def _mapping_table(values: Mapping[str, Any], head: tuple[str, str]) -> list[str]:
    """A mapping as a table: one row per key; values that are mappings spread over one column per inner key."""
    inner = [k for v in values.values() if isinstance(v, Mapping) for k in v]
    cols = list(dict.fromkeys(inner))
    if not cols:
        return md_table(list(head), [(k, _inline(v)) for k, v in values.items()])
    return md_table([head[0], *cols], [(k, *((v.get(c, 0) for c in cols) if isinstance(v, Mapping) else
                                             (_inline(v), *[""] * (len(cols) - 1)))) for k, v in values.items()])


def _counts_md(counts: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for section, values in counts.items():
        out += [f"### {section}", ""]
        if isinstance(values, Mapping) and not values:
            out.append("none")
        elif isinstance(values, Mapping):
            out += _mapping_table(values, _key_head(section))
        else:
            out.append(_inline(values))
        out.append("")
    return out


def render(data: ReportData, out_dir: Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``report.json`` and the Sankey PNGs under ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pictures = _draw_sankeys(data, out_dir)
    tfas = tfas_rows(data.target, data.source_sessions, data.conditions)
    tfas[1:1] = reference_rows(data.target, data.references)
    gaps = _gap_tables(data)
    text = "\n".join(_report_md(data, tfas, gaps, pictures)) + "\n"
    (out_dir / "report.md").write_text(text, encoding="utf-8")
    (out_dir / "report.html").write_text(markdown_to_html(text, title=f"Build report: {data.title}"), encoding="utf-8")
    (out_dir / "report.json").write_text(json.dumps({
        "title": data.title, "release": dict(data.release), "target": data.target.name, "tfas": tfas,
        "gaps": {k: v.as_dict() for k, v in gaps.items()}, "counts": data.counts, "selection": data.selection,
        "llm": data.llm, "verify": data.verify, "pictures": [p[1] for p in pictures],
        "split_rules": dict(data.split_rules), "question_intents": data.question_intents,
        "augmentations": data.augmentations,
    }, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return {"markdown": out_dir / "report.md", "html": out_dir / "report.html", "json": out_dir / "report.json"}


def _draw_sankeys(data: ReportData, out_dir: Path) -> list[tuple[str, str, str]]:
    """Plot the source, target and per-condition Sankeys; returns (title, file, caption) per picture."""
    from .sankey import plot_sankey

    pictures: list[tuple[str, str, str]] = []
    target_sessions = simulate_target_sessions(data.target)
    plot_sankey([list(s) for s in data.source_sessions], out_dir / "sankey_source.png",
                title=f"Source benchmark: first user messages ({counted(len(data.source_sessions), 'task')})")
    pictures.append(("Source benchmark", "sankey_source.png",
                     "Each task's original single-message prompt, labelled by the build's classifier."))
    plot_sankey(target_sessions, out_dir / "sankey_target.png",
                title=f"Target '{data.target.name}' (simulated from P_L and P_R, {len(target_sessions)} sessions)")
    pictures.append((f"Target: {data.target.name}", "sankey_target.png",
                     f"Simulated: {len(target_sessions)} sessions whose lengths are the target's P_L (to one "
                     f"session; its filter: >= {data.target.min_messages} messages) and whose intents walk its "
                     f"transition matrix P_R (seed {TARGET_SEED}). The target file holds aggregate vectors only; "
                     "no session text or sequence is published."))
    for cond, sessions in data.conditions.items():
        if not sessions:
            continue
        name = f"sankey_{cond}.png"
        n = counted(len(sessions), "session")
        plot_sankey([list(s) for s in sessions], out_dir / name, title=f"Condition {cond} ({n})")
        pictures.append((f"Condition: {cond}", name, f"{n} of the released split `{cond}`."))
    return pictures


def _gap_tables(data: ReportData) -> dict[str, Any]:
    """Gap tables of the source benchmark and the TFAS-optimized condition (those that can be scored)."""
    gaps = {}
    for name, sessions in (("source benchmark", data.source_sessions),
                           *((c, data.conditions[c]) for c in ("tfas_optimized",) if data.conditions.get(c))):
        try:
            gaps[name] = gap_table(data.target.flow, count_sessions(sessions).normalized())
        except FlowError:
            continue
    return gaps


def _report_md(data: ReportData, tfas: Sequence[Mapping[str, Any]], gaps: Mapping[str, Any],
               pictures: Sequence[tuple[str, str, str]]) -> list[str]:
    """The report's Markdown lines, section by section."""
    from .question_intents import render_markdown as intents_md

    md = _header_md(data) + _tfas_md(data, tfas) + _selection_md(data.selection)
    md += intents_md(data.question_intents)
    md += augmentation_md(data.augmentations)
    md += stress_md(data.stress.get("summary") or {}, data.stress.get("slices") or [])
    md += ["## Task Flow pictures", "", "Each picture links to its full-size PNG.", ""]
    for title, name, caption in pictures:
        md += [f"### {title}", "", f"[![{title}]({name})]({name})", "", caption, ""]
    md += _gaps_md(data, gaps)
    md += ["## Counts per status", "", *_counts_md(data.counts)]
    return md + _llm_md(data.llm) + _verify_md(data.verify) + _stages_md(data.stages)


def _creation_md(stage: Mapping[str, Any], noun: str) -> list[str]:
    """Counts per kind and status, then every ``noun`` the creation-time checks rejected, with its reason."""
    counts, rejected = stage.get("by_kind_status") or {}, stage.get("rejected") or []
    out = [f"### {noun.capitalize()}s per kind and status", ""]
    out += md_table(["kind", "accepted", "rejected", "error"],
                    [(k, v.get("accepted", 0), v.get("rejected", 0), v.get("error", 0)) for k, v in counts.items()])
    out += ["", f"### Rejected at creation (every {noun}, with its reason)", ""]
    return out + (md_table(["item", "kind", "pool", "status", "reason"],
                           [(f"`{r['question_id']}`", r["kind"], r["pool"], r["status"], r["reason"].replace("|", "/"))
                            for r in rejected]) if rejected else ["none"])


def augmentation_md(data: Mapping[str, Any]) -> list[str]:
    """The "Augmentations" section: TFAS with and without the new turns (components beside the aggregate), what the
    creation-time checks accepted and rejected (with every reason), what could not be proposed, and where the
    classifier disagrees with the kinds' declared intents (no lines when the build made no augmentation turn)."""
    stage, table = data.get("stage") or {}, data.get("tfas") or []
    if not stage.get("enabled"):
        return []
    out = ["## Augmentations (execute, debug, planning, review)", "",
           "Verifiable turns for intents the paper leaves open (docs/augmentations.md). "
           f"Kinds: {', '.join(stage.get('kinds', [])) or 'none (hand-written specs only)'}; "
           f"writer: {(stage.get('writer') or {}).get('name', '?')}; "
           f"sandbox: {(stage.get('sandbox') or {}).get('sandbox', 'none')}.", ""]
    if table:
        out += ["### TFAS of the optimized selection with and without the new augmentations", "",
                "Same target, search, seed and constraints; only the candidate family differs "
                "(`only <kind>`: that kind alone). Measured unfiltered, like Table 2.", ""]
        out += md_table(["family", "S_L", "S_T", "S_R", "TFAS", "turns", "augmentation turns", "by kind"],
                      [(r["family"], f"{r['S_L']:.3f}", f"{r['S_T']:.3f}", f"{r['S_R']:.3f}", f"{r['tfas']:.1f}",
                        r["turns"], r["augmentation_turns"],
                        _inline(dict(sorted(r["by_kind"].items()))) if r["by_kind"] else "-") for r in table])
        out.append("")
    out += _creation_md(stage, "item")
    out += ["", "### Not proposed", ""]
    np_ = stage.get("not_proposed") or {}
    out += [f"- **{k}**: " + "; ".join(f"{why} ({counted(n, 'task')})" for why, n in v.items()) for k, v in np_.items()] or ["none"]
    if stage.get("unknown_task_specs"):
        out.append("- hand-written specs for tasks not in this build (not checked): "
                   + ", ".join(f"`{x}`" for x in stage["unknown_task_specs"]))
    if stage.get("not_tried_after_acceptance"):
        out.append(f"- generated specs not tried once a kind had its items: "
                   f"{_inline(dict(sorted(stage['not_tried_after_acceptance'].items())))}")
    dis = data.get("disagreements") or {}
    out += ["", "### Classifier on the generated texts", "",
            f"Turn intents used for TFAS: **{data.get('intents', 'declared')}** "
            "(`declared`: the kind's intent; `classify`: the classifier's label, as for every message).", ""]
    if dis:
        out += md_table(["kind", "declared intent", "texts", "labelled as declared", "labels"],
                      [(k, v["declared"], v["texts"], v["agree"], _inline(dict(sorted(v["labels"].items()))))
                       for k, v in dis.items()])
        items = [(k, i) for k, v in dis.items() for i in v["items"]]
        if items:
            out += ["", "Disagreements:", ""]
            out += [f"- `{i['question_id']}` ({k}, {i['status']}): labelled **{i['label']}**" for k, i in items]
    else:
        out.append("No generated text.")
    out.append("")
    return out


def stress_md(summary: Mapping[str, Any], slices: Sequence[Mapping[str, Any]]) -> list[str]:
    """The "Stress-test slices" section, apart from the calibrated core (docs/stress.md): each slice's draw and
    rows, and every stress item the creation-time checks rejected, with its reason (no lines when the build has
    no stress slice and no stress spec)."""
    if not summary.get("enabled"):
        return []
    out = ["## Stress-test slices (reported apart from the calibrated core)", "", STRESS_WHY, ""]
    if slices:
        out += ["How each slice's rows were chosen: " + slices[0]["rule"] + ".", ""]
        out += md_table(["split", "kind", "tasks asked", "seed", "eligible tasks", "rows", "items tried", "chosen"],
                        [(f"`{s['split']}`", s["kind"], s["tasks_asked"], s["seed"], s["eligible"], len(s["chosen"]),
                          len(s["tried"]), ", ".join(f"`{c['question_id']}`" for c in s["chosen"]) or "none")
                         for s in slices])
        out.append("")
        short = [s for s in slices if len(s["chosen"]) < s["tasks_asked"]]
        for s in short:
            out.append(f"- `{s['split']}` holds {len(s['chosen'])} of the {s['tasks_asked']} tasks asked: "
                       f"{s['eligible']} eligible; not eligible: "
                       + ("; ".join(f"{why} ({n} tasks)" for why, n in s["not_eligible"].items()) or "none") + ".")
        if short:
            out.append("")
    out += _creation_md(summary, "stress item")
    if summary.get("unknown_task_specs"):
        out += ["", "Specs for tasks not in this build (not checked): "
                + ", ".join(f"`{x}`" for x in summary["unknown_task_specs"])]
    out += ["", f"Sandbox: {_inline({k: (summary.get('sandbox') or {}).get(k) for k in ('sandbox', 'tasks')})}; "
            f"writer: {(summary.get('writer') or {}).get('name', '?')}.", ""]
    return out


def _header_md(data: ReportData) -> list[str]:
    rel = data.release
    md: list[str] = [f"# Build report: {data.title}", ""]
    md += [f"Release **{rel.get('name')} {rel.get('version')}** (`{rel.get('release_id', '')}`), "
           f"target **{data.target.name}**" + (" (provisional)" if data.target.provisional else "") + ".", ""]
    return md + [f"- {n}" for n in data.notes] + ([""] if data.notes else [])


def _tfas_md(data: ReportData, tfas: Sequence[Mapping[str, Any]]) -> list[str]:
    md = ["## TFAS against the target (Table 2 shape)", "",
          f"Target: {data.target.population or data.target.name}; filter: at least {data.target.min_messages} "
          "messages. Benchmarks measured unfiltered, so single-message sessions score S_L = 0.", ""]
    rules = {"source benchmark (single prompts)": "none: the source benchmark's own prompts", **data.split_rules}
    md += md_table(["benchmark", "sessions", "mean turns", "S_L", "S_T", "S_R", "TFAS", "candidate selection"],
                    [(r["name"], r["sessions"], r["mean_turns"], _fmt(r, "S_L", ".3f"), _fmt(r, "S_T", ".3f"),
                      _fmt(r, "S_R", ".3f"), _fmt(r, "tfas", ".1f"),
                      rules.get(r["name"], r.get("reference", "-"))) for r in tfas],
                    "lrrrrrrl")
    return md + [""]


def _selection_md(sel: Mapping[str, Any]) -> list[str]:
    if not sel:
        return []
    cons = sel.get("constraints", {})
    config = sel.get("config", {})
    md = ["## TFAS-optimized selection", "",
          f"- configuration: {sel.get('config_text') or _inline(dict(sorted(config.items())))}",
          "- constraints (bound / achieved): " + (", ".join(f"{k} {c['bound']} / {c['achieved']}"
                                                             for k, c in cons.items()) or "none recorded"),
          f"- search: {_inline(dict(sorted(config.items())))}", ""]
    for title, key, head in (("Sessions by number of questions", "sessions_by_questions", ("questions", "sessions")),
                             ("Placement of the questions", "placement", ("placement", "sessions")),
                             ("Questions by slot", "questions_by_slot", ("slot", "questions"))):
        values = sel.get(key) or {}
        md += [f"### {title}", "", *(md_table(list(head), [(k, _inline(v)) for k, v in values.items()])
                                     if values else ["none"]), ""]
    return md


def _gaps_md(data: ReportData, gaps: Mapping[str, Any]) -> list[str]:
    """Each gap table's Markdown with its headings pushed down under "Gap tables"."""
    md = ["## Gap tables", ""]
    for name, table in gaps.items():
        md += [line.replace("# Task-Flow gap", "### Task-Flow gap", 1) if line.startswith("# ") else
               line.replace("## ", "#### ", 1) if line.startswith("## ") else line
               for line in render_markdown(table, target_name=data.target.name, benchmark_name=name).splitlines()]
        md.append("")
    return md


def _llm_md(llm: Mapping[str, Any]) -> list[str]:
    md = ["## LLM use and cost", ""]
    if llm:
        rows = [(stage, u.get("calls", 0), u.get("replayed", 0), u.get("prompt_tokens", 0),
                 u.get("completion_tokens", 0), f"{u.get('cost_usd', 0.0):.4f}") for stage, u in llm.items()]
        md += md_table(["stage", "calls", "replayed", "prompt tokens", "completion tokens", "cost USD"], rows)
    else:
        md.append("No LLM calls: the recipe uses the structural splitter and a question pool.")
    return md


def _verify_md(verify: Mapping[str, Any]) -> list[str]:
    md = ["", "## Verification", ""]
    if verify:
        md += [f"`verify`: **{'passed' if verify.get('ok') else 'FAILED'}**, {verify.get('rows', 0)} rows, "
               f"{verify.get('questions', 0)} questions.", ""]
        md += md_table(["split", "rows", "TFAS", "sha256"],
                        [(s["name"], s["rows"], "stress-test slice: none" if is_stress_split(s["name"]) else
                          f"{(s.get('tfas') or {}).get('tfas', float('nan')):.1f}",
                          f"`{s['sha256'][:16]}`") for s in verify.get("splits", [])])
    return md


def _stages_md(stages: Sequence[Mapping[str, Any]]) -> list[str]:
    return ["", "## Stages", "",
            *md_table(["stage", "key", "output hash"], [(s["stage"], f"`{s['key'][:12]}`", f"`{s['output_hash'][:16]}`")
                                                        for s in stages], "lll")]


def _slug(heading_html: str) -> str:
    """A heading's anchor: its words, lower case, joined by hyphens (``Task Flow pictures``: ``task-flow-pictures``)."""
    words = re.findall(r"[a-z0-9]+", html.unescape(re.sub(r"<[^>]+>", "", heading_html)).lower())
    return "-".join(words)


def markdown_to_html(text: str, *, title: str) -> str:
    """The report's Markdown as one HTML page (CommonMark with tables, through markdown-it-py; raw HTML in
    the text is escaped, since cells carry data such as rejection reasons)."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    body = re.sub(r"<h([23])>(.*?)</h\1>",   # sections one can link to: report.html#task-flow-pictures
                  lambda m: f'<h{m.group(1)} id="{_slug(m.group(2))}">{m.group(2)}</h{m.group(1)}>', body)
    style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px}"
             "code{background:#f3f3f3}img{max-width:100%}")
    return (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>\n{body}</body></html>\n")


__all__ = ["ReportData", "render", "simulate_target_sessions", "target_length_counts", "tfas_rows", "markdown_to_html"]
