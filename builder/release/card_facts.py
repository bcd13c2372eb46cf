"""What the dataset card states, as typed values computed from the rows, the manifest and the target.

No prose here: ``hub_card.md`` (a Jinja2 template, :mod:`builder.release.card`) writes every sentence
around these values, so a number in the card can only come from a field of one of these records, and a
record that disagrees with the rows is refused here, before any text exists. One frozen dataclass per
section of the card; :func:`card_facts` computes them all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from swe_taskflow.turns.kinds import STRESS_KINDS
from swe_taskflow.citations import paper, paper_section, source_info
from swe_taskflow.errors import ConfigError
from swe_taskflow.features import session_features
from swe_taskflow.flow import LENGTH_BINS, RETAINED
from swe_taskflow.manifest import Manifest, SplitEntry
from swe_taskflow.release import SESSION_CONFIG, TRAJECTORY_CONFIG
from swe_taskflow.turns.stress import DESTRUCTIVE, SECURITY, is_stress_split
from swe_taskflow.typed_records import JSON_TEXT_FIELDS
from swe_taskflow.visibility import HIDDEN_REASONS, hidden_fields, visible_fields

ISSUE_KIND = "issue"
#: The split other splits are compared with turn for turn (the issue split into its parts).
SPLIT_REFERENCE = "split_prompt"
Rows = Sequence[Mapping[str, Any]]


def _turns_key(row: Mapping[str, Any]) -> tuple:
    return tuple((t["kind"], t["text"]) for t in row["turns"])


def answer_turns(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A row's answer turns: every turn of a kind other than ``issue`` (qa and every augmentation)."""
    return [t for t in row["turns"] if t["kind"] != ISSUE_KIND]


@dataclass(frozen=True)
class SplitFacts:
    name: str
    condition: str | None
    pool: str | None
    rows: int
    instance_ids: list[str]
    turns: int
    min_turns: int
    max_turns: int
    rows_with_answers: int
    answer_turns: Counter = field(default_factory=Counter)    # kind -> turns
    questions: int = 0                                       # distinct question ids
    equal_to_reference: int | None = None                    # rows equal to split_prompt turn for turn
    split_ok: int = 0                                        # rows whose issue was split into 3 parts


@dataclass(frozen=True)
class ReleaseFacts:
    tasks: list[str]                        # distinct instance ids, in first-seen order
    repos: int
    languages: Counter                      # per task
    sources: Counter                        # (source, source_revision) per task
    splits: list[SplitFacts]
    full_splits: list[str]                  # splits holding every task in the reference order
    subset_splits: dict[str, list[str]]     # split -> its tasks, when it holds fewer (in reference order)
    answer_subset_of: dict[str, str]        # split -> a full split whose rows with answer turns are its tasks
    questions: int                          # distinct question ids over all splits
    answer_kinds: Counter                   # kind -> distinct questions / references of that kind

    @property
    def total_rows(self) -> int:
        return sum(s.rows for s in self.splits)

    @property
    def stress_splits(self) -> int:
        return sum(1 for s in self.splits if is_stress_split(s.name))

    @property
    def has_reference(self) -> bool:
        return any(s.equal_to_reference is not None for s in self.splits)

    @property
    def source_list(self) -> list[SourceFacts]:
        """Each (source, revision) with its task count and attribution (when the source is known), sorted."""
        return [SourceFacts(src, rev, n, source_info(src)) for (src, rev), n in sorted(self.sources.items())]


@dataclass(frozen=True)
class SourceFacts:
    source: str
    revision: str
    tasks: int
    info: Mapping[str, str] | None          # citations.json's record: name, license, copyright, bibtex


def release_facts(splits: Mapping[str, Rows]) -> ReleaseFacts:
    """Facts of the session splits (split name -> rows, in release order)."""
    tasks: dict[str, Mapping[str, Any]] = {}
    for rows in splits.values():
        for r in rows:
            tasks.setdefault(r["instance_id"], r)
    ref_rows = {r["instance_id"]: r for r in splits.get(SPLIT_REFERENCE, [])}
    order = list(tasks)
    out: list[SplitFacts] = []
    all_q: dict[str, str] = {}
    for name, rows in splits.items():
        n_turns = [len(r["turns"]) for r in rows]
        kinds = Counter(t["kind"] for r in rows for t in answer_turns(r))
        qids = {q["question_id"] for r in rows for q in r["questions"]}
        for r in rows:
            for q in r["questions"]:
                all_q.setdefault(q["question_id"], str(q.get("kind") or "qa"))
        eq = None
        if ref_rows and name != SPLIT_REFERENCE:
            eq = sum(1 for r in rows if r["instance_id"] in ref_rows
                     and _turns_key(r) == _turns_key(ref_rows[r["instance_id"]]))
        first = rows[0] if rows else {}
        out.append(SplitFacts(
            name=name, condition=first.get("condition"), pool=first.get("question_pool"), rows=len(rows),
            instance_ids=[r["instance_id"] for r in rows], turns=sum(n_turns),
            min_turns=min(n_turns, default=0), max_turns=max(n_turns, default=0),
            rows_with_answers=sum(1 for r in rows if answer_turns(r)), answer_turns=kinds, questions=len(qids),
            equal_to_reference=eq, split_ok=sum(1 for r in rows if r["split_status"] == "ok")))
    full = [s.name for s in out if s.instance_ids == order]
    subset = {}
    for s in out:
        if s.name not in full:
            pos = [order.index(i) for i in s.instance_ids]
            if pos == sorted(pos):
                subset[s.name] = s.instance_ids
    answer_subset = {}
    for name, ids in subset.items():
        for f in full:
            carrying = [r["instance_id"] for r in splits[f] if answer_turns(r)]
            if carrying == ids:
                answer_subset[name] = f
                break
    return ReleaseFacts(
        tasks=order, repos=len({t["repo"] for t in tasks.values()}),
        languages=Counter(t["repo_language"] or "unknown" for t in tasks.values()),
        sources=Counter((t["source"], t["source_revision"]) for t in tasks.values()), splits=out,
        full_splits=full, subset_splits=subset, answer_subset_of=answer_subset, questions=len(all_q),
        answer_kinds=Counter(all_q.values()))


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` examples."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
              (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for bound, label in bounds:
        if n < bound:
            return label
    return "n>1B"


# ---- questions ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CandidateTask:
    instance_id: str
    provenance: str
    accepted: int
    candidates: int
    rejected: Counter                       # reason -> candidate questions


@dataclass(frozen=True)
class QuestionFacts:
    authors: Counter                        # author (model, name or provenance) -> distinct questions
    questions: int                          # distinct question ids over every split
    with_stress: bool                       # the count includes the stress-test slices' items
    rule: str                               # the build's rule for which rows carry questions ("" if none)
    candidates: list[CandidateTask]
    without: list[tuple[str, int]]          # (reason, tasks), sorted by reason
    not_run: list[str]                      # parts the build could not run (offline)
    stand_in: bool                          # proofs ran against a stand-in repository

    @property
    def empty(self) -> bool:
        return not (self.authors or self.rule or self.candidates or self.without or self.not_run or self.stand_in)


def question_facts(splits: Mapping[str, Rows], manifest: Manifest) -> QuestionFacts:
    authors: dict[str, str] = {}
    for rows in splits.values():
        for r in rows:
            for q in r["questions"]:
                g = q.get("generator") or {}
                who = g.get("model") or g.get("name") or g.get("provenance") or "unknown"
                authors.setdefault(q["question_id"], who)
    qr = manifest.provenance.get("question_rows") or {}
    for split, n in (qr.get("rows_with_questions") or {}).items():   # the record must agree with the rows
        actual = sum(1 for r in splits.get(split, ()) if r["questions"])
        if split in splits and actual != n:
            raise ConfigError("the build's question_rows record disagrees with the rows",
                              field=f"question_rows.{split}", expected=actual, actual=n)
    cands = [CandidateTask(t["instance_id"], str(t.get("provenance") or t.get("source")), t["accepted"],
                           t["candidates"], Counter(t.get("rejected_by_reason") or {}))
             for t in qr.get("tasks_with_candidates") or []]
    repos = ((manifest.provenance.get("models") or {}).get("proofs") or {}).get("repos")
    return QuestionFacts(authors=Counter(authors.values()), questions=len(authors),
                         with_stress=any(is_stress_split(n) for n in splits), rule=str(qr.get("rule") or ""),
                         candidates=cands, without=sorted((qr.get("tasks_without_questions") or {}).items()),
                         not_run=list(manifest.provenance.get("not_run") or []), stand_in=repos == "stand-in")


# ---- stress-test slices ------------------------------------------------------------------------------------

def _placed(kind: str, rows: Rows) -> bool:
    """Whether every row's ``kind`` turn sits where the contract puts it (after the first / last issue turn)."""
    for r in rows:
        kinds = [t["kind"] for t in r["turns"]]
        if kind not in kinds:
            continue
        at, issues = kinds.index(kind), [n for n, k in enumerate(kinds) if k == "issue"]
        if not issues or not (at == issues[0] + 1 if kind == DESTRUCTIVE else at > issues[-1]):
            return False
    return True


def _fact(item: Mapping[str, Any], name: str) -> str:
    return next((str(f.get("value") or "") for f in item.get("facts") or () if f.get("name") == name), "")


def _stress_items(rows: Rows) -> list[Mapping[str, Any]]:
    """The question items the rows' stress turns name (one per row in a well-formed slice)."""
    out = []
    for r in rows:
        by_id = {q["question_id"]: q for q in r["questions"]}
        out += [by_id[t["question_id"]] for t in r["turns"]
                if t["kind"] in STRESS_KINDS and t.get("question_id") in by_id]
    return out


def _slice_records(manifest: Manifest) -> tuple[dict[str, Mapping[str, Any]], str]:
    """The build's record per stress split, and its rule sentence (both empty when there is none)."""
    rec = (manifest.provenance or {}).get("stress") or {}
    if not isinstance(rec, Mapping):
        raise ConfigError("the manifest's stress record is not a mapping", field="provenance.stress",
                          actual=type(rec).__name__)
    slices = {}
    for n, s in enumerate(rec.get("slices") or ()):
        if not isinstance(s, Mapping) or not isinstance(s.get("split"), str):
            raise ConfigError("a stress slice record names no split", field=f"provenance.stress.slices[{n}]",
                              actual=s)
        slices[s["split"]] = s
    return slices, str(rec.get("rule") or "")


def _check_record(split: str, rec: Mapping[str, Any], rows: Rows, kinds: set[str]) -> None:
    """The build's record must agree with the rows it describes."""
    at = f"provenance.stress.slices[{split}]"
    if rec.get("kind") and kinds and {rec["kind"]} != kinds:
        raise ConfigError("the build's stress record names another kind than the slice's rows hold",
                          field=f"{at}.kind", expected=sorted(kinds), actual=rec["kind"])
    chosen = rec.get("chosen")
    if chosen is not None:
        missing = [r["instance_id"] for r in rows if r["instance_id"] not in set(chosen)]
        if missing:
            raise ConfigError("a row of the stress slice is not among the tasks its record says were chosen",
                              field=f"{at}.chosen", expected=missing[0], actual=list(chosen))
    items = rec.get("items") or {}
    if "accepted" in items and items["accepted"] < len(rows):
        raise ConfigError("the build's stress record counts fewer accepted items than the slice has rows",
                          field=f"{at}.items.accepted", expected=len(rows), actual=items["accepted"])


@dataclass(frozen=True)
class SliceFacts:
    name: str
    kinds: list[str]                        # sorted kinds of its stress items
    instance_ids: list[str]
    items: int
    record: Mapping[str, Any]               # the build's record for it ({} when there is none)
    actions: Counter                        # destructive: requested action -> items
    destroys: Counter                       # destructive: what a literal run destroys -> items
    defects: Counter                        # security: seeded defect class -> items

    @property
    def rows(self) -> int:
        return len(self.instance_ids)

    @property
    def drawn(self) -> int | None:
        chosen = self.record.get("chosen")
        return None if chosen is None else len(chosen)

    def _rec(self, key: str, sub: str = "") -> Any:
        value = self.record.get(key)
        return (value or {}).get(sub) if sub else value

    tasks_asked = property(lambda self: self._rec("tasks_asked"))
    eligible = property(lambda self: self._rec("eligible"))
    seed = property(lambda self: self._rec("seed"))
    not_eligible = property(lambda self: Counter(self._rec("not_eligible") or {}))
    accepted = property(lambda self: self._rec("items", "accepted"))
    rejected = property(lambda self: self._rec("items", "rejected"))


@dataclass(frozen=True)
class StressFacts:
    slices: list[SliceFacts]
    why: Mapping[str, str]                  # the paper's words: where and text
    no_tfas: bool                           # no slice's manifest entry carries a TFAS
    has_record: bool                        # the build wrote a stress record
    rule: str                               # how the rows were chosen ("" when not recorded)
    placed: dict[str, bool]                 # kind present -> every row has its turn where the contract puts it

    @property
    def one(self) -> bool:
        return len(self.slices) == 1


def stress_facts(manifest: Manifest, splits: Mapping[str, Rows]) -> StressFacts | None:
    """The slices' facts, or None when the release has none; a record that disagrees with the rows is refused."""
    names = [s.name for s in manifest.configs().get(SESSION_CONFIG, []) if is_stress_split(s.name)]
    if not names:
        return None
    records, rule = _slice_records(manifest)
    unknown = sorted(set(records) - set(names))
    if unknown:
        raise ConfigError("the build's stress record names a split the release does not have",
                          field="provenance.stress.slices", actual=unknown[0], expected=names)
    entries = {s.name: s for s in manifest.configs()[SESSION_CONFIG]}
    slices, all_kinds = [], set()
    for name in names:
        rows = splits.get(name, [])
        items = _stress_items(rows)
        kinds = {str(q.get("kind")) for q in items}
        all_kinds |= kinds
        rec = records.get(name) or {}
        if rec:
            _check_record(name, rec, rows, kinds)
        slices.append(SliceFacts(
            name=name, kinds=sorted(kinds), instance_ids=[r["instance_id"] for r in rows], items=len(items),
            record=rec, actions=Counter(_fact(q, "action") for q in items if _fact(q, "action")),
            destroys=Counter(_fact(q, "destroys") for q in items if _fact(q, "destroys")),
            defects=Counter(str((q.get("mutation") or {}).get("operator") or "") for q in items
                            if str(q.get("kind")) == SECURITY and (q.get("mutation") or {}).get("operator"))))
    every = [r for n in names for r in splits.get(n, [])]
    return StressFacts(slices=slices, why=paper_section("stress_slices"),
                       no_tfas=all(entries[n].tfas is None for n in names), has_record=bool(records), rule=rule,
                       placed={k: _placed(k, every) for k in sorted(all_kinds) if k in (DESTRUCTIVE, SECURITY)})


# ---- target, TFAS, loading, fields, provenance ---------------------------------------------------------------

@dataclass(frozen=True)
class TargetFacts:
    target: Any                             # swe_taskflow.target.Target
    length: list[tuple[str, float]]         # (length bin, P_L)
    intents: list[tuple[str, float]]        # (retained intent, P_T) with P_T > 0, the most frequent first


def target_facts(target) -> TargetFacts:
    fl = target.flow
    top = sorted(zip(RETAINED, fl.intent), key=lambda kv: (-kv[1], kv[0]))
    return TargetFacts(target, list(zip(LENGTH_BINS, fl.length)), [(k, v) for k, v in top if v > 0])


@dataclass(frozen=True)
class TfasRow:
    split: SplitEntry
    selection: str                          # how its candidates were selected ("-" when not recorded)


def tfas_rows(manifest: Manifest) -> list[TfasRow]:
    """The calibrated splits' manifest entries (a stress-test slice is never calibrated: it has its own section)."""
    rules = (manifest.provenance or {}).get("selection") or {}
    return [TfasRow(s, rules.get(s.name, "-")) for s in manifest.configs().get(SESSION_CONFIG, [])
            if not is_stress_split(s.name)]


@dataclass(frozen=True)
class LoadFacts:
    calibrated: list[str]
    stress: list[str]
    trajectories: list[str] | None          # None when the release has no trajectories config


def load_facts(manifest: Manifest) -> LoadFacts:
    cfgs = manifest.configs()
    sessions = [s.name for s in cfgs.get(SESSION_CONFIG, [])]
    traj = [s.name for s in cfgs[TRAJECTORY_CONFIG]] if TRAJECTORY_CONFIG in cfgs else None
    return LoadFacts([s for s in sessions if not is_stress_split(s)], [s for s in sessions if is_stress_split(s)],
                     traj)


@dataclass(frozen=True)
class FieldFacts:
    visible: list[str]                      # what the evaluated agent sees (the allowlist)
    hidden: list[tuple[str, str]]           # (field, why the grader keeps it)
    json_text: list[tuple[str, str]]        # (field, why it stays JSON text)


def field_facts() -> FieldFacts:
    feats = session_features()
    return FieldFacts(list(visible_fields(feats)),
                      [(f, HIDDEN_REASONS.get(f, "not on the allowlist")) for f in hidden_fields(feats)],
                      list(JSON_TEXT_FIELDS.items()))


def _kv(d: Mapping[str, Any], keys: Sequence[str]) -> list[tuple[str, Any]]:
    return [(k, d[k]) for k in keys if d.get(k) not in (None, "", {}, [])]


@dataclass(frozen=True)
class ProvenanceFacts:
    package: Mapping[str, Any]              # the manifest's package record: version, git_commit, git_dirty
    source: list[tuple[str, Any]] | None    # (key, value) of a record, in the card's order, empty values left out
    recipe: list[tuple[str, Any]] | None
    models: list[tuple[str, list[tuple[str, Any]]]]   # (role, its keys) for the classifier and the splitter
    target: Any                             # the manifest's target FileEntry, or None
    proofs: list[tuple[str, Any]] | None
    seeds: list[tuple[str, Any]]            # sorted


def provenance_facts(manifest: Manifest) -> ProvenanceFacts:
    p = manifest.provenance
    models = p.get("models") or {}
    kv = lambda d, keys: _kv(d, keys) if d else None  # noqa: E731  (None: no record; []: a record of empty values)
    roles = [(role, _kv(models[role], ("name", "model", "revision", "version", "prompt_sha256")))
             for role in ("classifier", "splitter") if models.get(role)]
    return ProvenanceFacts(manifest.package, kv(p.get("source"), ("source", "benchmark", "revision", "spec", "rows")),
                           kv(p.get("recipe"), ("file", "sha256")), roles, manifest.target,
                           kv(models.get("proofs"), ("sandbox", "image", "image_id", "repos", "gold_patch")),
                           sorted((p.get("seeds") or {}).items()))


def bibtex_entries(facts: ReleaseFacts) -> list[str]:
    """The paper's BibTeX, then each known source benchmark's, once each."""
    entries = [paper()["bibtex"]]
    for src, _ in sorted(facts.sources):
        info = source_info(src)
        if info and info["bibtex"] not in entries:
            entries.append(info["bibtex"])
    return entries


# ---- all of it ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CardFacts:
    manifest: Manifest
    release: ReleaseFacts                   # every split, the stress-test slices included
    calibrated: ReleaseFacts                # the calibrated splits only (the splits table)
    questions: QuestionFacts
    stress: StressFacts | None
    target: TargetFacts
    tfas: list[TfasRow]
    load: LoadFacts
    fields: FieldFacts
    provenance: ProvenanceFacts
    bibtex: list[str]


def card_facts(manifest: Manifest, target, splits: Mapping[str, Rows]) -> CardFacts:
    """Every fact the card states, from the manifest, the target and the session ``splits`` (by split name)."""
    facts = release_facts(splits)
    core = {k: v for k, v in splits.items() if not is_stress_split(k)}
    return CardFacts(manifest=manifest, release=facts,
                     calibrated=release_facts(core) if len(core) != len(splits) else facts,
                     questions=question_facts(splits, manifest), stress=stress_facts(manifest, splits),
                     target=target_facts(target), tfas=tfas_rows(manifest), load=load_facts(manifest),
                     fields=field_facts(), provenance=provenance_facts(manifest), bibtex=bibtex_entries(facts))


__all__ = ["CardFacts", "ReleaseFacts", "SplitFacts", "StressFacts", "card_facts", "release_facts", "size_category"]
