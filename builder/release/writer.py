"""Write a release folder: exactly the files that go to the Hub.

Layout (one config per row kind, one split per condition)::

    README.md                                   dataset card rendered from hub_card.md
    croissant.json                              Croissant 1.0 metadata (record sets, sha256s, RAI)
    data/<split>-00000-of-00001.parquet         config "default": session rows
    trajectories/<split>-00000-of-00001.parquet config "trajectories" (when given)
    target/<target file name>                   the target Task Flow the release is calibrated to
    manifests/<name>-<version>.json             provenance and every hash

Everything is a pure function of the inputs: no timestamps, fixed parquet settings, rows in the
order given, so two builds from the same inputs are byte-identical.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from swe_taskflow import __version__, untrusted
from swe_taskflow.errors import ConfigError, InputError, VerifyError
from swe_taskflow.features import conform, features_sha256, schema_differences, session_features, trajectory_features
from swe_taskflow.hashing import ROW_HASH_FIELD, file_sha256, canonical_sha256, row_sha256, split_sha256
from swe_taskflow.owned import owned_temp_dir, swap_dir
from swe_taskflow.manifest import (FLOAT_TOL, PROVENANCE_KEYS, FileEntry, Manifest, SplitEntry, values_equal)
from swe_taskflow.safepath import check_component
from swe_taskflow.schema import SPLIT_NAME_RE
from swe_taskflow.turns.stress import is_stress_split
from swe_taskflow.target import load_target
from swe_taskflow.release import SESSION_CONFIG, TRAJ_HASH_FIELD, TRAJECTORY_CONFIG, open_release
from swe_taskflow.verify_checks import split_tfas

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
REPO_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
#: Parquet settings are part of the byte identity of a release: change them only with a new format.
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 3, "row_group_size": 1000,
                   "use_dictionary": True, "write_statistics": True, "data_page_version": "1.0"}
MAX_ROWS_PER_SHARD = 20_000
TFAS_KEYS = ("tfas", "S_L", "S_T", "S_R")


def shard_paths(folder: str, split: str, n_rows: int) -> list[str]:
    n = max(1, -(-n_rows // MAX_ROWS_PER_SHARD))
    return [f"{folder}/{split}-{i:05d}-of-{n:05d}.parquet" for i in range(n)]


def package_info(repo_root: Path | None = None) -> dict[str, Any]:
    """Package version, git commit and whether the tree was dirty (None when not in a git checkout)."""
    root = repo_root or Path(__file__).resolve().parents[2]
    info: dict[str, Any] = {"name": "swe-taskflow", "version": __version__, "git_commit": None, "git_dirty": None}
    if not (root / "pyproject.toml").is_file():   # an installed wheel: site-packages is no checkout of ours
        return info
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=20)
        if commit.returncode == 0:
            info["git_commit"] = commit.stdout.strip()
            st = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=20)
            info["git_dirty"] = bool(st.stdout.strip()) if st.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        pass
    return info


def normalize_provenance(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """Every provenance section present; the recipe's hash filled in when the caller did not."""
    if not isinstance(provenance, Mapping):
        raise InputError("provenance must be a mapping", field="provenance", actual=type(provenance).__name__)
    out = {k: provenance.get(k) or {} for k in PROVENANCE_KEYS}
    out.update({k: v for k, v in provenance.items() if k not in PROVENANCE_KEYS and k != "package"})
    recipe = dict(out["recipe"])
    if recipe and "sha256" not in recipe:
        recipe["sha256"] = canonical_sha256(recipe)
    out["recipe"] = recipe
    return out


def _write_shards(folder: str, split: str, rows: list[Mapping[str, Any]], feats, tmp: Path):
    """A split's rows as parquet shards under ``folder``: (bytes of row data, the file entries)."""
    nbytes, files = 0, []
    for i, rel in enumerate(shard_paths(folder, split, len(rows))):
        chunk = rows[i * MAX_ROWS_PER_SHARD:(i + 1) * MAX_ROWS_PER_SHARD]
        nbytes += _write_parquet(chunk, feats, tmp / rel)
        files.append(FileEntry(rel, file_sha256(tmp / rel), (tmp / rel).stat().st_size))
    return nbytes, files


def _write_parquet(rows: list[dict[str, Any]], features, path: Path) -> int:
    """Write rows with the declared schema; returns the in-memory arrow size (README num_bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = features.arrow_schema
    table = pa.Table.from_pylist(rows, schema=schema)
    diffs = schema_differences(features, table.schema)
    if diffs:
        raise VerifyError("rows do not match the declared features: " + "; ".join(diffs), path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, **PARQUET_OPTIONS)
    written = pq.read_schema(path)
    diffs = schema_differences(features, written)
    if diffs:  # datasets would cast silently: refuse instead
        raise VerifyError("written parquet schema differs from the declared features: " + "; ".join(diffs),
                          path=str(path))
    return int(table.nbytes)


def _check_rows(split: str, rows: Sequence[Mapping[str, Any]], features, hash_field: str) -> list[dict[str, Any]]:
    out = []
    seen: set[Any] = set()
    for n, r in enumerate(rows):
        c = conform(dict(r), features, where=f"split {split}", row=n)
        # an instance id names a folder wherever the row is exported (a Harbor task, a repository checkout)
        check_component(c.get("instance_id"), field="instance_id", path=f"split {split}", row=n)
        stated = c.get(hash_field)
        actual = row_sha256(c, field=hash_field)
        if stated is None and hash_field == TRAJ_HASH_FIELD:
            c[hash_field] = stated = actual
        if stated != actual:
            raise InputError("row hash does not match the row's content (build rows with swe_taskflow.rows)",
                             path=f"split {split}", row=n, field=hash_field, expected=actual, actual=stated)
        key = c["instance_id"] if hash_field == ROW_HASH_FIELD else (c["instance_id"], c["model"], c["run"])
        if key in seen:
            raise InputError("duplicate row in a split", path=f"split {split}", row=n, field="instance_id",
                             actual=key)
        seen.add(key)
        out.append(c)
    return out


def _one_value(rows, key: str, split: str):
    values = sorted({r[key] for r in rows}, key=lambda v: (v is None, v or ""))
    if len(values) > 1:
        raise InputError(f"a split holds rows of several {key}s", path=f"split {split}", field=key, actual=values)
    return values[0] if values else None


def _check_release_args(name: str, version: str, repo_id: str | None, splits: Mapping[str, Any]) -> None:
    if repo_id is not None and not REPO_ID_RE.match(repo_id):
        raise ConfigError("repository id must look like ORG/NAME", field="repo_id", actual=repo_id,
                          expected=REPO_ID_RE.pattern)
    if not NAME_RE.match(name or "") or not NAME_RE.match(version or ""):
        raise ConfigError("release name and version must be simple identifiers", field="name/version",
                          actual=[name, version], expected=NAME_RE.pattern)
    if not splits:
        raise InputError("a release needs at least one split", field="splits")
    for s in splits:
        if not SPLIT_NAME_RE.match(s):
            raise ConfigError("split name is not valid on the Hub", field="splits", actual=s,
                              expected=SPLIT_NAME_RE.pattern)


@dataclass
class _SessionSplits:
    """What writing the session splits yields for the rest of the release."""

    entries: list[SplitEntry] = field(default_factory=list)
    questions: dict[str, str] = field(default_factory=dict)            # question id -> proof report hash
    split_hashes: dict[str, str] = field(default_factory=dict)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    row_hashes: dict[str, dict[str, str]] = field(default_factory=dict)  # split -> instance id -> row hash


def _check_tfas(split: str, got, tfas: Mapping[str, Mapping[str, float]] | None) -> None:
    """The caller's TFAS must equal the one recomputed from the target and the split's sessions.

    A stress-test slice (``stress_*``) has none: it is reported apart and never calibrated, so a TFAS
    given for one is a caller's mistake, said as such."""
    given = None if tfas is None or split not in tfas else {k: tfas[split].get(k) for k in TFAS_KEYS}
    if is_stress_split(split):
        if tfas is not None and tfas.get(split) is not None:
            raise ConfigError(f"a TFAS is given for the stress-test slice '{split}'; stress slices are never "
                              "calibrated and carry none", field=f"tfas.{split}", actual=dict(tfas[split]))
        return
    if given is not None and not values_equal(given, got, tol=FLOAT_TOL):
        raise VerifyError(f"TFAS given for split '{split}' differs from the value recomputed from the target "
                          "and its sessions", field=f"tfas.{split}", expected=got, actual=given)


def _collect_questions(split: str, rows: list[dict[str, Any]], questions: dict[str, str]) -> None:
    """One proof report per question across all splits."""
    for n, r in enumerate(rows):
        for q in r["questions"]:
            prev = questions.setdefault(q["question_id"], q["proof_report_sha256"])
            if prev != q["proof_report_sha256"]:
                raise InputError("one question carries different proof reports", path=f"split {split}",
                                 row=n, field=q["question_id"], expected=prev, actual=q["proof_report_sha256"])


def _write_session_splits(splits: Mapping[str, Sequence[Mapping[str, Any]]], target, tfas, tmp: Path) -> _SessionSplits:
    sfeat = session_features()
    out = _SessionSplits()
    for split, raw in splits.items():
        rows = _check_rows(split, raw, sfeat, ROW_HASH_FIELD)
        # a stress slice is reported apart: its TFAS is never computed (swe_taskflow.turns.stress)
        got = split_tfas(target, rows) if rows and not is_stress_split(split) else None
        _check_tfas(split, got, tfas)
        _collect_questions(split, rows, out.questions)
        nbytes, files = _write_shards("data", split, rows, sfeat, tmp)
        out.rows[split] = rows
        out.split_hashes[split] = split_sha256(r[ROW_HASH_FIELD] for r in rows)
        out.row_hashes[split] = {r["instance_id"]: r[ROW_HASH_FIELD] for r in rows}
        out.entries.append(SplitEntry(SESSION_CONFIG, split, len(rows), out.split_hashes[split],
                                      features_sha256(sfeat), tuple(files), nbytes,
                                      condition=_one_value(rows, "condition", split),
                                      question_pool=_one_value(rows, "question_pool", split), tfas=got))
    return out


def _write_trajectories(trajectories: Sequence[Mapping[str, Any]], sessions: _SessionSplits,
                        tmp: Path) -> list[SplitEntry]:
    """Trajectory splits, each row bound to its session split's and row's hashes."""
    tfeat = trajectory_features()
    by_split: dict[str, list[Mapping[str, Any]]] = {}
    for t in trajectories:
        by_split.setdefault(t.get("condition"), []).append(t)
    entries = []
    for split in sorted(by_split, key=str):
        if split not in sessions.split_hashes:
            raise InputError("trajectory for a split this release does not have", field="condition",
                             actual=split, expected=sorted(sessions.split_hashes))
        rows = _check_rows(split, sorted(by_split[split], key=lambda t: (t["instance_id"], t["model"], t["run"])),
                           tfeat, TRAJ_HASH_FIELD)
        split_hash, row_hashes = sessions.split_hashes[split], sessions.row_hashes[split]
        for n, r in enumerate(rows):
            if r["split_sha256"] != split_hash or row_hashes.get(r["instance_id"]) != r["row_sha256"]:
                raise InputError("trajectory is not bound to this release's split and row hashes",
                                 path=f"trajectories {split}", row=n, field="split_sha256/row_sha256",
                                 expected=[split_hash, row_hashes.get(r["instance_id"])],
                                 actual=[r["split_sha256"], r["row_sha256"]])
        nbytes, files = _write_shards("trajectories", split, rows, tfeat, tmp)
        entries.append(SplitEntry(TRAJECTORY_CONFIG, split, len(rows), split_sha256(r[TRAJ_HASH_FIELD] for r in rows),
                                  features_sha256(tfeat), tuple(files), nbytes, condition=split))
    return entries


def _copy_in(src: str | os.PathLike, tmp: Path, rel: str) -> FileEntry:
    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, tmp / rel)
    return FileEntry(rel, file_sha256(tmp / rel), (tmp / rel).stat().st_size)


def _copy_extras(extra_files: Mapping[str, str | os.PathLike] | None, tmp: Path) -> list[FileEntry]:
    from swe_taskflow.croissant import CROISSANT_PATH

    extras = []
    for rel, src in sorted((extra_files or {}).items()):
        if rel in ("README.md", CROISSANT_PATH) or rel.startswith(("data/", "trajectories/", "manifests/", "target/")):
            raise ConfigError("extra file would overwrite a release file", field="extra_files", actual=rel)
        extras.append(_copy_in(src, tmp, rel))
    return extras


def _write_card_and_manifest(common: Mapping[str, Any], target, session_rows, card_template, tmp: Path) -> Manifest:
    """README (from a draft manifest), croissant.json, then the manifest that hashes both."""
    from swe_taskflow.croissant import CROISSANT_PATH, croissant_bytes

    from .card import render_card

    draft = Manifest(**common, readme=FileEntry("README.md", "", 0))
    card = render_card(draft, target, session_rows, template=card_template)
    (tmp / "README.md").write_bytes(card)
    croissant = croissant_bytes(draft, target_name=target.name, target_provisional=target.provisional)
    (tmp / CROISSANT_PATH).write_bytes(croissant)
    manifest = Manifest(**common, readme=FileEntry("README.md", file_sha256(tmp / "README.md"), len(card)),
                        croissant=FileEntry(CROISSANT_PATH, file_sha256(tmp / CROISSANT_PATH), len(croissant)))
    (tmp / "manifests").mkdir()
    (tmp / manifest.path_in_release).write_bytes(manifest.to_bytes())
    return manifest


def write_release(out_dir: str | os.PathLike, *, name: str, version: str,
                  splits: Mapping[str, Sequence[Mapping[str, Any]]], target_path: str | os.PathLike,
                  provenance: Mapping[str, Any], tfas: Mapping[str, Mapping[str, float]] | None = None,
                  trajectories: Sequence[Mapping[str, Any]] | None = None, repo_id: str | None = None,
                  license: str = "mit", description: str = "",
                  extra_files: Mapping[str, str | os.PathLike] | None = None,
                  card_template: str | os.PathLike | None = None) -> Manifest:
    """Write a complete release folder and return its manifest.

    ``splits``: split name (a condition) -> release rows from :func:`swe_taskflow.rows.build_row`, in
    order. ``tfas``: the caller's TFAS per split, checked against the recomputed value (a mismatch is
    an error, so the README never shows a number an auditor cannot reproduce). ``trajectories``: rows
    from :mod:`builder.release.trajectories`, bound to these splits' hashes. ``extra_files``: path in
    release -> local file (e.g. the build report), hashed into the manifest. ``repo_id``: the Hub
    dataset repository (``ORG/NAME``) written into the card, croissant.json and the manifest; None
    until the recipe or ``push --repo`` sets it.
    """
    _check_release_args(name, version, repo_id, splits)
    target_path = Path(target_path)
    target = load_target(target_path)
    prov = normalize_provenance(provenance)
    package = dict(provenance.get("package") or package_info())

    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "manifests").is_dir():
        raise ConfigError("output folder exists and is not a release", path=str(out_dir),
                          hint="choose an empty folder; an existing release folder is replaced")
    # owned name: a killed writer's half-written release is swept by the next command (swe_taskflow.owned)
    tmp = owned_temp_dir(f".{out_dir.name}.", out_dir.parent)
    try:
        sessions = _write_session_splits(splits, target, tfas, tmp)
        entries = sessions.entries + (_write_trajectories(trajectories, sessions, tmp) if trajectories else [])
        target_entry = _copy_in(target_path, tmp, f"target/{target_path.name}")
        extras = _copy_extras(extra_files, tmp)
        release = {"repo_id": repo_id, "license": license, "description": description}
        common = dict(name=name, version=version, provenance=prov, package=package, splits=tuple(entries),
                      questions=sessions.questions, target=target_entry, extra_files=tuple(extras), release=release)
        manifest = _write_card_and_manifest(common, target, sessions.rows, card_template, tmp)
        os.chmod(tmp, 0o755)
        swap_dir(tmp, out_dir)   # old aside, new in, old removed: an interrupt never loses the release
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    from swe_taskflow.manifest import manifest_from_dict
    return manifest_from_dict(manifest.to_dict())


def read_release(root: str | os.PathLike):
    """A release folder's manifest and its rows: ``(manifest, session splits, trajectory rows)``."""
    release = open_release(root)
    return release.manifest, release.session_splits(), release.trajectory_rows()


def rewrite_release(root: str | os.PathLike, out_dir: str | os.PathLike | None = None, *,
                    trajectories: Sequence[Mapping[str, Any]] | None = None, **release: Any) -> Manifest:
    """Write the release at ``root`` again (to ``out_dir``, default in place) with some things changed.

    ``trajectories`` replaces the trajectory rows; ``release`` keys (``repo_id``, ``license``,
    ``description``) replace the manifest's. Rows, provenance, package record, target and extra files
    are kept, so the session splits' hashes do not change.
    """
    root = Path(root)
    manifest, splits, trajs = read_release(root)
    unknown = sorted(set(release) - {"repo_id", "license", "description"})
    if unknown:
        raise ConfigError("unknown release field", field=unknown[0], expected=["repo_id", "license", "description"])
    info = {**{k: v for k, v in manifest.release.items() if v is not None}, **release}
    rows = trajs if trajectories is None else trajectories
    for f in [manifest.target, *manifest.extra_files]:   # copied below: a link or a FIFO in the release is refused
        if f is not None:
            untrusted.check_file(root / f.path, "release file", limit=1 << 62, root=root)
    # read from ``root`` itself: write_release copies everything into a new folder before it replaces ``root``
    return write_release(out_dir or root, name=manifest.name, version=manifest.version, splits=splits,
                         target_path=root / manifest.target.path,
                         provenance={**manifest.provenance, "package": manifest.package},
                         trajectories=[{**r, TRAJ_HASH_FIELD: None} for r in rows] or None,
                         extra_files={f.path: root / f.path for f in manifest.extra_files}, **info)


__all__ = ["write_release", "read_release", "rewrite_release", "REPO_ID_RE", "package_info", "normalize_provenance", "shard_paths", "PARQUET_OPTIONS"]
