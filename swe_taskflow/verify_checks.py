"""The pure checks ``verify`` runs on a release's pieces: card vs manifest, rows of a split, trajectories.

Each returns (or appends) :class:`VerifyError` findings; :mod:`swe_taskflow.verify` reads the files and
calls them. Kept apart so that the orchestration (which touches the disk) stays small.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .errors import VerifyError
from .hashing import ROW_HASH_FIELD, canonical_sha256
from .manifest import Manifest, compare_mappings
from .release import SESSION_CONFIG, TRAJECTORY_CONFIG
from .safepath import component_problem


def features_for(config: str):
    from .features import session_features, trajectory_features
    if config == SESSION_CONFIG:
        return session_features()
    if config == TRAJECTORY_CONFIG:
        return trajectory_features()
    raise VerifyError("unknown config", kind="unexpected", field="config", actual=config,
                      expected=[SESSION_CONFIG, TRAJECTORY_CONFIG])


def split_tfas(target, rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """TFAS of a split's sessions (every row, turn intents in order) against a target, with components."""
    from .flow import count_sessions, score
    counts = count_sessions([[t["intent"] for t in r["turns"]] for r in rows], min_messages=1)
    return score(target.flow, counts.normalized()).as_dict()


def read_front_matter(text: str, *, where: str) -> dict[str, Any]:
    """The YAML header of a dataset card."""
    import yaml
    if not text.startswith("---\n"):
        raise VerifyError("README has no YAML header", kind="missing", path=where)
    end = text.find("\n---\n", 4)
    if end < 0:
        raise VerifyError("README YAML header is not closed", kind="mismatch", path=where)
    try:
        data = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise VerifyError(f"README YAML header does not parse ({exc})", kind="mismatch", path=where) from None
    except RecursionError:
        raise VerifyError("README YAML header is nested too deeply", kind="mismatch", path=where) from None
    if not isinstance(data, dict):
        raise VerifyError("README YAML header is not a mapping", kind="mismatch", path=where)
    return data


def _matched_configs(configs: Mapping[str, Any], declared: Mapping[Any, Any], *, what: str, where: str):
    """Errors for configs the README lacks or adds, and ``(config, splits, declared entry)`` of those it has."""
    errors = compare_mappings({k: True for k in configs}, {k: True for k in declared}, what=what, where=where)
    return errors, [(cfg, splits, declared[cfg]) for cfg, splits in configs.items() if declared.get(cfg) is not None]


def check_card(meta: Mapping[str, Any], manifest: Manifest, *, where: str) -> list[VerifyError]:
    """README ``configs`` / ``dataset_info`` vs the manifest: splits, data files, features, sizes."""
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData
    configs = manifest.configs()
    declared_cfg = {c.get("config_name"): c for c in meta.get("configs") or [] if isinstance(c, Mapping)}
    errors, matched = _matched_configs(configs, declared_cfg, what="config (README configs)", where=where)
    for cfg, splits, dc in matched:
        declared = {d.get("split"): d.get("path") for d in dc.get("data_files") or []}
        expected = {s.name: [f.path for f in s.files] if len(s.files) > 1 else s.files[0].path for s in splits}
        errors += compare_mappings(expected, declared, what=f"{cfg} data_files split", where=where)
    try:
        infos = DatasetInfosDict.from_dataset_card_data(DatasetCardData(**dict(meta)))
    except Exception as exc:  # malformed dataset_info of any kind
        return errors + [VerifyError(f"README dataset_info does not parse ({exc})", kind="mismatch", path=where)]
    info_errors, matched = _matched_configs(configs, infos, what="config (README dataset_info)", where=where)
    errors += info_errors
    for cfg, splits, info in matched:
        feats = features_for(cfg)
        if info.features is None or info.features != feats:
            errors.append(VerifyError(f"README dataset_info features of config '{cfg}' differ from the release schema",
                                      kind="mismatch", path=where, field=f"dataset_info[{cfg}].features",
                                      expected=canonical_sha256(feats.to_dict()),
                                      actual=None if info.features is None else canonical_sha256(info.features.to_dict())))
        exp = {s.name: {"num_examples": s.rows, "num_bytes": s.num_bytes} for s in splits}
        act = {name: {"num_examples": si.num_examples, "num_bytes": si.num_bytes}
               for name, si in (info.splits or {}).items()}
        errors += compare_mappings(exp, act, what=f"{cfg} dataset_info split", where=where)
        sizes = {"download_size": sum(f.size for s in splits for f in s.files),
                 "dataset_size": sum(s.num_bytes for s in splits)}
        errors += compare_mappings(sizes, {"download_size": info.download_size, "dataset_size": info.dataset_size},
                                   what=f"{cfg} dataset_info", where=where)
    return errors


def check_session_rows(rows, entry, where, report, questions) -> None:
    seen: set[str] = set()
    for n, r in enumerate(rows):
        if r["instance_id"] in seen:
            report.errors.append(VerifyError("instance appears twice in one split", kind="unexpected", path=where,
                                             row=n, field="instance_id", actual=r["instance_id"]))
        seen.add(r["instance_id"])
        problem = component_problem(r["instance_id"])
        if problem is not None:   # it names a folder wherever the row is exported
            report.errors.append(VerifyError(f"instance id is not one safe path component: {problem}",
                                             kind="mismatch", path=where, row=n, field="instance_id",
                                             actual=r["instance_id"]))
        if r["condition"] != entry.condition or r["question_pool"] != entry.question_pool:
            report.errors.append(VerifyError("row condition/pool differs from its split's", kind="mismatch", path=where,
                                             row=n, field="condition",
                                             expected=[entry.condition, entry.question_pool],
                                             actual=[r["condition"], r["question_pool"]]))
        for q in r["questions"] or []:
            h = None if q["proof_report"] is None else canonical_sha256(q["proof_report"])
            if h != q["proof_report_sha256"]:
                report.errors.append(VerifyError("proof report does not match its proof_report_sha256", kind="mismatch",
                                                 path=where, row=n, field=f"questions[{q['question_id']}].proof_report",
                                                 expected=q["proof_report_sha256"], actual=h))
            prev = questions.setdefault(q["question_id"], h)
            if prev != h:
                report.errors.append(VerifyError("one question carries different proof reports in different splits",
                                                 kind="mismatch", path=where, row=n, field=q["question_id"],
                                                 expected=prev, actual=h))


def check_same_tasks(session_rows, manifest: Manifest) -> list[VerifyError]:
    """An instance must derive from the same source task (``source_task_sha256``) in every split."""
    errors: list[VerifyError] = []
    first: dict[str, tuple[str, str]] = {}
    for split, rows in session_rows.items():
        entry = manifest.split(SESSION_CONFIG, split)
        where = entry.files[0].path if entry is not None else split
        for n, r in enumerate(rows):
            seen = first.setdefault(r["instance_id"], (r["source_task_sha256"], split))
            if seen[0] != r["source_task_sha256"]:
                errors.append(VerifyError(f"instance derives from a different source task than in split '{seen[1]}'",
                                          kind="mismatch", path=where, row=n, field="source_task_sha256",
                                          expected=seen[0], actual=r["source_task_sha256"]))
    return errors


def check_trajectory_turns(traj: Mapping[str, Any], row: Mapping[str, Any] | None, where: str,
                           n: int) -> list[VerifyError]:
    """A trajectory's checkpoints must sit on issue turns of its row, its answers on the row's questions."""
    if row is None:
        return []
    errors = []
    issue_turns = {t["turn_index"] for t in row["turns"] if t["kind"] == "issue"}
    for c in traj.get("checkpoints") or []:
        if c["turn_index"] not in issue_turns:
            errors.append(VerifyError("trajectory checkpoint is not on an issue turn of its row", kind="mismatch",
                                      path=where, row=n, field="checkpoints.turn_index",
                                      expected=sorted(issue_turns), actual=c["turn_index"]))
    qids = {q["question_id"] for q in row.get("questions") or []}
    for a in traj.get("qa_answers") or []:
        if a["question_id"] not in qids:
            errors.append(VerifyError("trajectory answers a question its row does not hold", kind="mismatch",
                                      path=where, row=n, field="qa_answers.question_id", expected=sorted(qids),
                                      actual=a["question_id"]))
    return errors


def check_trajectories(rows, entry, where, manifest: Manifest, session_rows, report) -> None:
    split = manifest.split(SESSION_CONFIG, entry.name)
    if split is None:
        report.errors.append(VerifyError("trajectories for a split the release does not have", kind="unexpected",
                                         path=where, field="condition", actual=entry.name))
        return
    row_of = {r["instance_id"]: r[ROW_HASH_FIELD] for r in session_rows.get(entry.name, [])}
    bound = {r["instance_id"]: r for r in session_rows.get(entry.name, [])}
    seen: dict[tuple, int] = {}
    for n, r in enumerate(rows):
        key = (r["instance_id"], r["model"], r["run"])   # what the writer refuses twice (builder.release.writer)
        if key in seen:
            report.errors.append(VerifyError("duplicate trajectory row (same instance, model and run)",
                                             kind="unexpected", path=where, row=n, field="instance_id",
                                             actual=list(key), hint=f"first on row {seen[key]}"))
        seen.setdefault(key, n)
        problem = component_problem(r["instance_id"])
        if problem is not None:
            report.errors.append(VerifyError(f"instance id is not one safe path component: {problem}",
                                             kind="mismatch", path=where, row=n, field="instance_id",
                                             actual=r["instance_id"]))
        report.errors += check_trajectory_turns(r, bound.get(r["instance_id"]), where, n)
        if r["split_sha256"] != split.sha256:
            report.errors.append(VerifyError("trajectory is bound to another split hash", kind="mismatch", path=where,
                                             row=n, field="split_sha256", expected=split.sha256,
                                             actual=r["split_sha256"]))
        if row_of and row_of.get(r["instance_id"]) != r["row_sha256"]:
            report.errors.append(VerifyError("trajectory is bound to a row hash its split does not hold",
                                             kind="mismatch", path=where, row=n, field="row_sha256",
                                             expected=row_of.get(r["instance_id"]), actual=r["row_sha256"]))
