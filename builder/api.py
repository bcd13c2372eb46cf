"""The builder's public face: build, export, import, push, re-prove, classify, agreement and select in eight calls.

What ``swe_taskflow.__all__`` is for auditors, this module is for scripts that make releases: the
workflows the ``swe-taskflow`` command runs, assembled here once (the judge backend, the auditor's
``ProofRunner`` and its ceilings, the label cache and Ray) so a script never copies the CLI. One
spelling everywhere: ``release`` is a release folder (or a Hub id where verifying allows one), ``out``
the folder or file a call writes. Every result is a frozen dataclass; every failure is a
:class:`swe_taskflow.errors.TaskflowError` naming the file, row and field. The CLI in ``builder.cli``
parses flags, calls these and prints. Heavy dependencies load inside the calls, so importing this
module stays light. Its names change only together with CHANGELOG.md's "Builder public API" list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from swe_taskflow.errors import ConfigError, InputError

if TYPE_CHECKING:   # light at import: the core's verify loads pyarrow
    from swe_taskflow.verify import VerifyReport

PathLike = str | os.PathLike

#: Judge backends ``import_jobs`` accepts (the project's LLM backends).
JUDGES = ("openai", "transformers", "replay")
#: Messages labelled per window by ``classify``; sessions are written as their window finishes.
CLASSIFY_WINDOW = 8192


# --- results ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Built:
    """What ``build`` did: per stage ``(name, "ran" | "cached" | planned status)``; ``plan`` is the dry run's table.
    ``source``: the recipe's source tasks when they are a local file or folder (their gold patches are not
    released); ``repos``: the checkouts the proofs ran against. Both are what ``reprove`` takes."""

    name: str
    version: str
    out: Path
    stages: tuple[tuple[str, str], ...]
    release: Path | None = None
    report: Path | None = None
    wall_s: float = 0.0
    dry_run: bool = False
    plan: str = ""
    source: Path | None = None
    repos: Path | None = None

    @property
    def ran(self) -> int:
        return sum(1 for _, status in self.stages if status == "ran")


@dataclass(frozen=True)
class Exported:
    """A condition written as a Harbor dataset: one entry per task (instance_id, dir, name, digest, status)."""

    out: Path
    condition: str
    dataset_name: str
    tasks: tuple[Mapping[str, Any], ...]
    registry: Mapping[str, Any]
    warnings: tuple[str, ...] = ()

    @property
    def steps(self) -> int:
        return sum(len(t["steps"]) for t in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """The export index, as ``export harbor --json`` prints it."""
        return {"out": str(self.out), "dataset": self.dataset_name, "tasks": list(self.tasks),
                "registry": dict(self.registry), "warnings": list(self.warnings)}


@dataclass(frozen=True)
class Judge:
    """The LLM judge of answer turns: a backend of the project (``JUDGES``), its model and response store."""

    backend: str
    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    store: PathLike | None = None


@dataclass(frozen=True)
class Imported:
    """Harbor jobs read back: ``results`` (results.json's document), the plots and the trajectories added."""

    out: Path
    results: Mapping[str, Any]
    summary: tuple[str, ...]
    plots: tuple[str, ...] = ()
    trajectories_added: int = 0
    trajectories_manifest: str | None = None

    @property
    def results_path(self) -> Path:
        return self.out / "results.json"


@dataclass(frozen=True)
class Pushed:
    """What landed on the Hub: the commit, the tag, and every file's sha256 confirmed there."""

    repo: str
    commit_oid: str
    parent_commit: str
    tag: str | None
    files: Mapping[str, str] = field(default_factory=dict)
    already_published: bool = False
    rewritten: bool = False


@dataclass(frozen=True)
class Reproved:
    """A release verified with every proof re-run; ``report`` is the core's :class:`VerifyReport`."""

    release: str
    report: VerifyReport

    @property
    def ok(self) -> bool:
        return not self.report.errors

    @property
    def errors(self) -> tuple:
        return tuple(self.report.errors)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(self.report.notes)


@dataclass(frozen=True)
class Skipped:
    """A session ``classify`` left out (no message to label)."""

    path: str
    line: int
    session_id: str
    reason: str


@dataclass(frozen=True)
class Classified:
    """Sessions labelled into ``out``: messages labelled, sessions written, the classifier's name and version."""

    out: Path
    labelled: int
    sessions: int
    classifier: str
    version: str
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True)
class Selected:
    """What ``select`` wrote into ``out`` (selection.jsonl, sessions.jsonl, report.json, intents.jsonl, and
    conditions/ when asked): the selection's score over ``tasks`` tasks and how the search went."""

    out: Path
    tasks: int
    tfas: float
    S_L: float
    S_T: float
    S_R: float
    evaluations: int
    wall_s: float
    config: str
    """The selection configuration in one line (``swe_taskflow.select.describe``)."""


@dataclass(frozen=True)
class Agreement:
    """How labelled copies of the same messages agree (``agreement``): one pair per two files, in the order given;
    each pair's ``exact``, Cohen's ``kappa`` and its confusion counts (rows: the pair's first file)."""

    files: tuple[str, ...]
    messages: int
    sessions: int
    pairs: tuple[Any, ...]
    """``swe_taskflow.agreement.PairAgreement`` records (a, b, n, exact, kappa, confusion)."""
    mean_exact: float
    document: Mapping[str, Any]
    """The figures as ``--json`` writes them (``swe_taskflow.agreement.agreement_document``): the confusion file
    ``flow measure --confusion`` reads."""


# --- the eight calls -------------------------------------------------------------------------------------------

def build(recipe: PathLike, out: PathLike, *, cache: PathLike | None = None, dry_run: bool = False,
          force: Iterable[str] = (), until: str | None = None, quiet: bool = False,
          overwrite: bool = False) -> Built:
    """Build the release of ``recipe`` (a TOML file or a shipped recipe's name, e.g. ``"example"``) into ``out``.

    ``out`` gets release/, report/, cache/ (unless ``cache`` names another folder) and build.json; stages
    are cached and a rerun resumes. ``dry_run`` checks the recipe and plans without running a stage."""
    from .pipeline.build import build as run_build, dry_run_text
    from .pipeline.registry import pipeline_stages
    from .resources import resolve_recipe

    outcome = run_build(resolve_recipe(os.fspath(recipe)), Path(out), cache_dir=None if cache is None else Path(cache),
                        dry_run=dry_run, force=force, until=until, quiet=quiet, overwrite=overwrite)
    rec = outcome.recipe
    source = rec.resolve(rec.source.spec)
    return Built(name=rec.release.name, version=rec.release.version, out=Path(outcome.out),
                 stages=tuple((r.name, r.status) for r in outcome.results), release=outcome.release,
                 report=outcome.report, wall_s=outcome.wall_s, dry_run=outcome.dry_run,
                 plan=dry_run_text(outcome.results, pipeline_stages()) if outcome.dry_run else "",
                 source=source if source.exists() else None,
                 repos=None if outcome.dry_run else _repos_folder(rec, Path(cache) if cache else Path(out) / "cache"))


def _repos_folder(recipe, cache: Path) -> Path | None:
    """The repositories the proofs stage used: the recipe's checkouts, or the bundled repository committed into
    the cache's work area under its content hash (``builder.pipeline.repos.materialize``)."""
    from .pipeline.folder_hash import tree_hash

    sec = recipe.repos
    if sec.path:
        return recipe.resolve(sec.path)
    if not sec.bundled or not recipe.resolve(sec.bundled).is_dir():
        return None
    root = cache / "work" / "repos" / tree_hash(recipe.resolve(sec.bundled))[:24]
    return root if (root / ".commit").exists() else None


def export_harbor(release: PathLike, condition: str, out: PathLike, *, tasks: Iterable[str] | None = None,
                  run_scripts: PathLike | None = None, source: str | None = None, options: Any = None,
                  progress: Callable[[str], None] | None = None) -> Exported:
    """Write ``condition`` of the verified ``release`` as a Harbor dataset folder ``out`` (new or empty).

    ``tasks``: only these instance ids (an empty list is an error, never "all"); ``options``: an
    :class:`builder.evaluation.options.ExportOptions` (org, app dir, timeouts, resources, solutions);
    ``progress`` is called with each exported instance id."""
    from .evaluation.export import export_harbor as run_export
    from .evaluation.options import ExportOptions

    result = run_export(release, condition, out, tasks=None if tasks is None else list(tasks),
                        run_scripts=run_scripts, source=source, opts=options or ExportOptions(), progress=progress)
    return Exported(out=Path(result.out), condition=condition, dataset_name=result.dataset_name,
                    tasks=tuple(result.tasks), registry=dict(result.registry), warnings=tuple(result.warnings))


def default_results_folder(jobs: Sequence[PathLike]) -> Path:
    """Where ``import_jobs`` writes without ``out``: one job's own ``swe-taskflow`` folder; for several,
    ``swe-taskflow-results`` here (never inside one job)."""
    return Path(jobs[0]) / "swe-taskflow" if len(jobs) == 1 else Path("swe-taskflow-results")


def judge_backend(judge: Judge):
    """The project's LLM backend for ``judge``, with the judge's fixed sampling parameters."""
    if judge.backend not in JUDGES:
        raise ConfigError(f"unknown judge backend {judge.backend!r}", field="judge", actual=judge.backend,
                          expected=list(JUDGES))
    from .evaluation.scoring import JUDGE_PARAMS
    from .llm import get_backend

    cfg: dict[str, Any] = {"model": judge.model, "params": dict(JUDGE_PARAMS)}
    if judge.backend == "openai":
        cfg.update(base_url=judge.base_url, api_key_env=judge.api_key_env)
    return get_backend(judge.backend, store=judge.store, **cfg)


def import_jobs(jobs: Sequence[PathLike], release: PathLike, out: PathLike | None = None, *,
                judge: Judge | None = None, dataset: PathLike | None = None, trajectories: bool = True,
                first_run: int = 0, replace: bool = False, plots: bool = True,
                max_answer_bytes: int | None = None) -> Imported:
    """Read Harbor job folders run on ``release``'s export: bind every trial to its row, judge answer turns
    (``judge``; without one, qa answers stay unjudged), write ``out``/results.json and the plots, and add the
    valid trials' trajectories to ``release`` (unless ``trajectories=False``)."""
    from .evaluation.importer import import_job, summary_lines
    from .evaluation.jobfiles import MAX_ANSWER_BYTES

    if not jobs:
        raise InputError("no Harbor job folder given", field="jobs")
    folder = Path(out) if out is not None else default_results_folder(jobs)
    doc = import_job(list(jobs), release, folder, judge=None if judge is None else judge_backend(judge),
                     dataset=dataset, add_to_release=trajectories, first_run=first_run, replace=replace,
                     plots=plots, max_answer_bytes=MAX_ANSWER_BYTES if max_answer_bytes is None else max_answer_bytes)
    added = doc.get("trajectories") or {}
    return Imported(out=folder, results=doc, summary=tuple(summary_lines(doc)), plots=tuple(doc.get("plots") or ()),
                    trajectories_added=int(added.get("added", 0)), trajectories_manifest=added.get("manifest"))


def push(release: PathLike, repo: str, *, tag: str | None = None, private: bool = False,
         record: PathLike | None = None, hub_timeout: float | None = None, token: str | None = None) -> Pushed:
    """Publish the verified ``release`` folder to Hub dataset ``repo`` as one commit and tag (default: its
    version); ``record`` keeps a copy of the pushed manifest. The token (argument, ``HF_TOKEN`` or the login)
    is never printed or put into an error."""
    from .release.push import push_release

    r = push_release(release, repo, tag=tag, private=private, token=token, record_dir=record,
                     hub_timeout=hub_timeout)
    return Pushed(repo=r.repo_id, commit_oid=r.commit_oid, parent_commit=r.parent_commit, tag=r.tag,
                  files=dict(r.files), already_published=r.already_published, rewritten=r.rewritten)


def reprove(release: PathLike, *, revision: str | None = None, repos: PathLike | None = None,
            tasks: PathLike | None = None, sandbox: str = "auto", max_timeout_s: float | None = None,
            max_mem_mb: int | None = None, max_tmpfs_mb: int | None = None, hub_timeout: float | None = None,
            progress: bool = False) -> Reproved:
    """Verify ``release`` (a folder, or ORG/NAME on the Hub at ``revision``) and re-run every proof script in the
    auditor's ``sandbox`` (auto: docker when a daemon answers, else bwrap; harbor[:env]) under the auditor's
    ceilings (``max_*``: a report's own limit is kept only when lower). ``repos``: checkouts of the source
    repositories; ``tasks``: the source tasks, so every reference derived from a gold patch is re-checked too.
    Every sandbox is stopped before it returns, also on an error or an interrupt."""
    from .proofs import ProofRunner
    from .proofs.config import AUDITOR_CEILINGS
    from swe_taskflow.verify import verify_release

    ceilings = AUDITOR_CEILINGS   # the auditor's machine decides where and under which limits (docs/proofs.md)
    if max_timeout_s is not None:
        ceilings = replace(ceilings, timeout_s=max_timeout_s)
    if max_mem_mb is not None:
        ceilings = replace(ceilings, mem_mb=max_mem_mb)
    if max_tmpfs_mb is not None:
        ceilings = replace(ceilings, tmpfs_mb=max_tmpfs_mb)
    source_tasks = None
    if tasks is not None:
        from .sources import load_tasks
        source_tasks = {t.instance_id: t for t in load_tasks(tasks).ok}
    runner = ProofRunner(sandbox or "auto", ceilings=ceilings)
    try:
        report = verify_release(os.fspath(release), revision=revision, reprove=True,
                                repos_dir=None if repos is None else Path(repos), run_proof=runner,
                                progress=progress, tasks=source_tasks, hub_timeout=hub_timeout)
    finally:
        runner.close()
    return Reproved(release=os.fspath(release), report=report)


def classify(sessions: PathLike, out: PathLike, *, classifier: str = "embedded", batch_size: int = 64,
             device: str = "auto", cache: bool = True, keep_existing: bool = False, progress: bool = False,
             ray: str | None = None, actors: int | None = None,
             on_skip: Callable[[Skipped], None] | None = None) -> Classified:
    """Label every user message of the sessions file ``sessions`` with an intent into ``out`` (written as
    windows finish, atomically). Labels come from the on-disk label cache (``cache=False``: neither read nor
    written); a model loads only when one is missing. ``ray``: a cluster's address, or ``"local"`` for one on
    loopback. ``on_skip`` hears each session without a message, before any labelling."""
    from .classify import LabelCache, default_cache_dir, load_classifier
    from swe_taskflow.session_table import read_sessions_report
    from swe_taskflow.sessions import write_sessions

    path = os.fspath(sessions)
    records, skipped_rows = read_sessions_report(path, skip_empty=True)
    skipped = tuple(Skipped(path, s.line, s.session_id, s.reason) for s in skipped_rows)
    for s in skipped:
        if on_skip is not None:
            on_skip(s)
    if not records:
        raise InputError("no session with a message to label", path=path)
    cache_dir = default_cache_dir() if cache else None
    clf = load_classifier(classifier, device=device, batch_size=batch_size, lazy=cache_dir)
    store = LabelCache(clf.info, cache_dir) if cache_dir else False
    predict = _ray_predict(ray, classifier, device, batch_size, actors) if ray else None
    todo = [(i, j) for i, r in enumerate(records) for j, lab in enumerate(r.intents)
            if not (keep_existing and lab is not None)]
    window = len(todo) if ray else max(CLASSIFY_WINDOW, 128 * batch_size)
    from swe_taskflow.progress import progress_bar

    with progress_bar(len(todo), desc=f"classify ({clf.info['name']})", unit="msgs", rate=True,
                      enabled=progress) as bar:
        n = write_sessions(out, _labelled(records, todo, window, clf, store, predict, lambda k: bar(n=k)))
    return Classified(out=Path(out), labelled=len(todo), sessions=n, classifier=clf.info["name"],
                      version=str(clf.info["version"]), skipped=skipped)


def agreement(files: Sequence[PathLike], out: PathLike | None = None) -> Agreement:
    """Pairwise agreement of two or more labelled sessions files over the same messages (a classifier's output
    against a reader's labels, or two readers); ``out``: also write the figures as JSON there (the confusion file
    of ``flow measure --confusion``). Files that hold other messages, or the same positions with other text,
    are refused naming the first that differs: labels are only compared on the same text."""
    from swe_taskflow.agreement import agreement_document, pairwise
    from swe_taskflow.jsonl import write_json
    from swe_taskflow.session_table import read_sessions

    paths = [os.fspath(f) for f in files]
    if len(paths) < 2:
        raise InputError("agreement needs two or more labelled sessions files", actual=len(paths))
    names = [p if paths.index(p) == i else f"{p} (#{i + 1})" for i, p in enumerate(paths)]  # a file may repeat
    read: list[tuple[dict[tuple[str, int], str], dict[tuple[str, int], str]]] = []
    for p in paths:
        labels, texts = {}, {}
        for r in read_sessions(p, require_intents=True):   # require_intents: every message has its label
            for j, (lab, text) in enumerate(zip(r.intents, r.texts)):
                labels[(r.session_id, j)], texts[(r.session_id, j)] = str(lab), text
        read.append((labels, texts))
    keys = sorted(read[0][0])
    for p, (labels, texts) in zip(paths[1:], read[1:]):
        if set(labels) != set(keys):
            missing = sorted(set(keys) ^ set(labels))[0]
            raise InputError("the files do not hold the same messages", path=p, field="session_id/message",
                             actual=f"{missing[0]}#{missing[1]}",
                             hint="classify the same input file with each classifier")
        differ = next((k for k in keys if texts[k] != read[0][1][k]), None)
        if differ is not None:   # same keys, other messages: the labels would be compared on different texts
            raise InputError(f"message text differs from {paths[0]}", path=p, field=f"{differ[0]}#{differ[1]}.text",
                             hint="agreement compares labels of the same messages; classify the same input file")
    pairs = pairwise({n: [labels[k] for k in keys] for n, (labels, _) in zip(names, read)})
    document = agreement_document(pairs, n_messages=len(keys))
    if out is not None:
        write_json(out, document)
    return Agreement(files=tuple(names), messages=len(keys), sessions=len({k[0] for k in keys}), pairs=tuple(pairs),
                     mean_exact=sum(pa.exact for pa in pairs) / len(pairs), document=document)


def select(tasks: PathLike, target: PathLike, out: PathLike, *, pool: PathLike | None = None, config=None,
           intents: PathLike | None = None, classifier: str = "embedded", allow_candidates: bool = False,
           conditions: bool = False, progress: bool = False) -> Selected:
    """The TFAS-optimized selection (paper Appendix F) of the split results ``tasks`` (and the question pool
    ``pool``) against ``target`` (a Task-Flow file, ``"default"`` or a shipped target's name), written into
    ``out``: byte-identical for the same inputs and seed. ``config``: a ``swe_taskflow.select.SelectConfig``
    (default: its defaults). Issue texts take their intent from ``intents`` (rows ``{text, intent}``), else
    from ``classifier`` through the label cache. ``conditions`` also writes every fixed condition."""
    import hashlib
    import time

    from swe_taskflow.candidates import build_materials
    from swe_taskflow.conditions import assemble
    from swe_taskflow.flow_inputs import resolve_target
    from swe_taskflow.jsonl import check_output_dir, read_records, write_json, write_jsonl
    from swe_taskflow.schema import QAItem, SplitResult
    from swe_taskflow.select import SelectConfig, describe, select_and_report
    from swe_taskflow.target import load_target

    config = config if config is not None else SelectConfig()
    check_output_dir(out)
    target_file = resolve_target(os.fspath(target))
    found = load_target(target_file)
    splits = read_records(os.fspath(tasks), SplitResult, unique="instance_id")
    questions = read_records(os.fspath(pool), QAItem, unique="question_id") if pool else []
    statuses = ("accepted", "candidate") if allow_candidates else ("accepted",)
    materials, pool_summary = build_materials(splits, questions, statuses=statuses)
    texts = [t for m in materials for t in m.issue_texts()]
    known, intent_rows = _issue_intents(texts, None if intents is None else os.fspath(intents), classifier)
    t0 = time.perf_counter()
    sel, report = select_and_report(materials, known, found, config, where=os.fspath(pool or tasks),
                                    baselines=True, pool_summary=pool_summary, progress=progress)
    wall = time.perf_counter() - t0
    report["inputs"] = {   # what this call read, beside the selection's own report
        name: {"path": str(p), "sha256": hashlib.sha256(Path(p).read_bytes()).hexdigest()}
        for name, p in (("tasks", os.fspath(tasks)), ("pool", pool and os.fspath(pool)), ("target", target_file),
                        ("intents", intents and os.fspath(intents))) if p}
    report["pool"]["statuses_used"] = list(statuses)
    report["intents"] = {"texts": len(intent_rows),
                         "classified": sum(1 for r in intent_rows if r["origin"] == "classifier"),
                         "classifier": classifier}
    folder = Path(out)
    write_jsonl(folder / "intents.jsonl", intent_rows)
    write_jsonl(folder / "selection.jsonl", sel.selection_rows())
    sessions = []
    for r in sel.rows():
        assert r.session is not None, r.instance_id      # a selected task always keeps its issue turns
        sessions.append(r.session.to_dict())
    write_jsonl(folder / "sessions.jsonl", sessions)
    write_json(folder / "report.json", report)
    if conditions:
        for cond, rows in assemble(materials, known, seed=config.seed).items():
            write_jsonl(folder / "conditions" / f"{cond}.jsonl", [r.to_dict() for r in rows])
    score = sel.score
    return Selected(out=folder, tasks=len(materials), tfas=score.tfas, S_L=score.S_L, S_T=score.S_T, S_R=score.S_R,
                    evaluations=sel.stats.evaluations, wall_s=wall, config=describe(config))


def _issue_intents(texts: list[str], known_path: str | None, classifier: str) -> tuple[dict[str, str], list[dict]]:
    """Each distinct issue text's intent: from ``known_path`` (rows ``{text, intent}``), else the classifier's
    label through the label cache; and the rows of intents.jsonl (text hash, intent, origin)."""
    import hashlib

    from swe_taskflow.jsonl import read_jsonl
    from swe_taskflow.taxonomy import check_intent

    known: dict[str, str] = {}
    if known_path:
        for line, obj in read_jsonl(known_path):
            if not isinstance(obj.get("text"), str):
                raise InputError("missing text", path=known_path, row=line, field="text")
            known[obj["text"]] = check_intent(obj.get("intent"), path=known_path, row=line)
    rows: dict[str, dict[str, Any]] = {t: {"text": t, "intent": known[t], "origin": "given"} for t in texts
                                       if t in known}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        from .classify import label_texts, load_classifier
        clf = load_classifier(classifier)
        preds = label_texts(missing, clf, progress=True)   # through the label cache, as the build's stages
        info = dict(clf.info)
        for t, pr in zip(missing, preds):
            rows[t] = {"text": t, "intent": pr.intent, "confidence": round(float(pr.confidence), 6),
                       "origin": "classifier", "classifier": info}
    out = [{"text_sha256": hashlib.sha256(t.encode("utf-8")).hexdigest(), **rows[t]} for t in dict.fromkeys(texts)]
    return {t: rows[t]["intent"] for t in rows}, out


def _ray_predict(address: str, classifier: str, device: str, batch_size: int, actors: int | None):
    from functools import partial

    from .classify import load_classifier
    from .classify.scale import connect, label_with_ray

    connect(address)
    make = partial(load_classifier, classifier, device=device, batch_size=batch_size)
    return lambda texts, advance: label_with_ray(texts, make, batch_size=batch_size, actors=actors)


def _labelled(records, todo, window, clf, store, predict, advance):
    """Each session with its labels, once its last message to label is labelled (todo is contiguous per session)."""
    from .classify import label_texts

    texts = [records[i].texts[j] for i, j in todo]
    span: dict[int, list[int]] = {}   # session -> its first and last position in todo
    for k, (i, _) in enumerate(todo):
        span.setdefault(i, [k, k])[1] = k
    preds: list = []
    for i, r in enumerate(records):
        while i in span and span[i][1] >= len(preds):
            chunk = texts[len(preds):len(preds) + window]
            preds.extend(label_texts(chunk, clf, cache=store, progress=advance, predict=predict))
        got = {todo[k][1]: preds[k] for k in range(span[i][0], span[i][1] + 1)} if i in span else {}
        intents = [got[j].intent if j in got else lab for j, lab in enumerate(r.intents)]
        confs = [round(got[j].confidence, 6) if j in got else (r.confidences[j] if r.confidences else None)
                 for j in range(len(r.texts))]
        yield r.with_intents(intents, confs)


__all__ = ["build", "export_harbor", "import_jobs", "push", "reprove", "classify", "agreement", "select",
           "Built", "Exported", "Imported", "Judge", "Pushed", "Reproved", "Classified", "Skipped", "Agreement",
           "Selected",
           "default_results_folder", "judge_backend", "JUDGES"]
