"""The provenance manifest of a release: a versioned JSON document, and pure comparisons against it.

The manifest names everything that determines the release (source benchmark and its file hashes,
package version and git commit, recipe and its hash, models with revisions, prompt-template hashes,
seeds) and every hash an auditor recomputes (per split: rows, content hash, files, schema hash, TFAS
with components; per question: its proof report hash; the target Task Flow file; the README).
It holds no timestamps, and carries its own hash (``manifest_sha256``, canonical JSON without that
field), so two builds of the same inputs give byte-identical manifests.

The comparisons here are pure: they take expected and actual values and return :class:`VerifyError`
objects whose ``kind`` is ``missing``, ``unexpected`` or ``mismatch``; I/O lives in ``verify``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import InputError, VerifyError
from .hashing import json_sha256
from .jsonl import check_format
from .schema import Record

FORMAT = "swe-taskflow/manifest"
FORMAT_VERSION = 2
#: What a release says about itself (written into its card and Croissant file): its Hub repository
#: id (None until the recipe or ``push --repo`` sets it), license and the recipe's description.
RELEASE_KEYS = ("repo_id", "license", "description")
#: Provenance sections a manifest always has (empty when the build had none of that kind).
PROVENANCE_KEYS = ("source", "recipe", "models", "prompts", "seeds")
FLOAT_TOL = 1e-9


@dataclass(frozen=True)
class FileEntry(Record):
    """One file of the release: path relative to the release root, sha256 of its bytes, size."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class SplitEntry(Record):
    """One split of one config (its JSON form: :meth:`Record.to_dict`)."""

    config: str
    name: str
    rows: int
    sha256: str              # split hash over ordered row hashes
    schema_sha256: str       # hash of the features' dict form
    files: tuple[FileEntry, ...]
    num_bytes: int           # in-memory arrow size, as README dataset_info declares it
    condition: str | None = None
    question_pool: str | None = None
    tfas: Mapping[str, float] | None = None   # {tfas, S_L, S_T, S_R}


@dataclass(frozen=True)
class Manifest:
    """A release's provenance and hashes (see module doc)."""

    name: str
    version: str
    provenance: Mapping[str, Any]
    package: Mapping[str, Any]                 # name, version, git_commit, git_dirty
    splits: tuple[SplitEntry, ...]
    questions: Mapping[str, str]               # question_id -> proof report sha256
    target: FileEntry | None
    readme: FileEntry
    extra_files: tuple[FileEntry, ...] = ()    # e.g. the build report
    release: Mapping[str, Any] = field(default_factory=dict)   # RELEASE_KEYS
    croissant: FileEntry | None = None         # croissant.json, written after the card
    format_version: int = FORMAT_VERSION
    manifest_sha256: str = field(default="", compare=False)

    @property
    def release_id(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def path_in_release(self) -> str:
        return f"manifests/{self.release_id}.json"

    def split(self, config: str, name: str) -> SplitEntry | None:
        for s in self.splits:
            if s.config == config and s.name == name:
                return s
        return None

    def configs(self) -> dict[str, list[SplitEntry]]:
        out: dict[str, list[SplitEntry]] = {}
        for s in self.splits:
            out.setdefault(s.config, []).append(s)
        return out

    def all_files(self) -> list[FileEntry]:
        files = [f for s in self.splits for f in s.files]
        if self.target is not None:
            files.append(self.target)
        return [*files, self.readme, *([self.croissant] if self.croissant else []), *self.extra_files]

    @property
    def repo_id(self) -> str | None:
        return self.release.get("repo_id") or None

    def body(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": self.format_version, "name": self.name,
                "version": self.version, "provenance": _plain(self.provenance), "package": _plain(self.package),
                "splits": [s.to_dict() for s in self.splits], "questions": dict(sorted(self.questions.items())),
                "target": None if self.target is None else self.target.to_dict(),
                "readme": self.readme.to_dict(), "extra_files": [f.to_dict() for f in self.extra_files],
                "release": {k: self.release.get(k) for k in RELEASE_KEYS},
                "croissant": None if self.croissant is None else self.croissant.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        body = self.body()
        return {**body, "manifest_sha256": json_sha256(body)}

    def to_bytes(self) -> bytes:
        return serialize(self.to_dict())


def _plain(obj: Any) -> Any:
    return json.loads(json.dumps(obj, sort_keys=True))


def serialize(doc: Mapping[str, Any]) -> bytes:
    """The one byte form of a manifest file (sorted keys, indent 2, UTF-8, final newline)."""
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _file(d: Mapping[str, Any], where: str, fld: str) -> FileEntry:
    try:
        return FileEntry(path=str(d["path"]), sha256=str(d["sha256"]), size=int(d["size"]))
    except (KeyError, TypeError, ValueError):
        raise InputError("malformed file entry", path=where, field=fld) from None


def manifest_from_dict(doc: Mapping[str, Any], *, where: str = "<manifest>") -> Manifest:
    """Parse a manifest document; the format and version are checked, not guessed."""
    check_format(doc, FORMAT, FORMAT_VERSION, kind="manifest", name="swe-taskflow manifest", where=where)
    try:
        splits = tuple(SplitEntry(
            config=s["config"], name=s["name"], rows=int(s["rows"]), sha256=s["sha256"],
            schema_sha256=s["schema_sha256"],
            files=tuple(_file(f, where, f"splits[{n}].files") for f in s["files"]),
            num_bytes=int(s["num_bytes"]), condition=s.get("condition"), question_pool=s.get("question_pool"),
            tfas=s.get("tfas")) for n, s in enumerate(doc["splits"]))
        return Manifest(
            name=doc["name"], version=doc["version"], provenance=doc.get("provenance") or {},
            package=doc.get("package") or {}, splits=splits, questions=dict(doc.get("questions") or {}),
            target=None if doc.get("target") is None else _file(doc["target"], where, "target"),
            readme=_file(doc["readme"], where, "readme"),
            extra_files=tuple(_file(f, where, "extra_files") for f in doc.get("extra_files") or ()),
            release={k: (doc["release"] or {}).get(k) for k in RELEASE_KEYS},
            croissant=None if doc.get("croissant") is None else _file(doc["croissant"], where, "croissant"),
            format_version=int(doc["format_version"]), manifest_sha256=str(doc.get("manifest_sha256", "")))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed manifest ({exc!r})", path=where) from None


def load_manifest(path: str | Path) -> tuple[Manifest, bytes]:
    """Read a manifest file; returns the model and the raw bytes (for the canonical-form check)."""
    path = Path(path)
    if not path.exists():
        raise VerifyError("manifest file is missing", kind="missing", path=str(path))
    raw = path.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerifyError(f"manifest is not valid JSON ({exc})", kind="mismatch", path=str(path)) from None
    except RecursionError:
        raise VerifyError("manifest JSON is nested too deeply", kind="mismatch", path=str(path)) from None
    if not isinstance(doc, dict):
        raise VerifyError("manifest is not a JSON object", kind="mismatch", path=str(path))
    return manifest_from_dict(doc, where=str(path)), raw


# ---------------------------------------------------------------- pure comparisons
def check_manifest_integrity(raw: bytes, *, where: str) -> list[VerifyError]:
    """The manifest's self-hash and byte form: any changed byte of the file shows up here."""
    errors: list[VerifyError] = []
    doc = json.loads(raw.decode("utf-8"))
    stated = doc.get("manifest_sha256")
    body = {k: v for k, v in doc.items() if k != "manifest_sha256"}
    actual = json_sha256(body)
    if stated != actual:
        errors.append(VerifyError("manifest content does not match its manifest_sha256", kind="mismatch",
                                  path=where, field="manifest_sha256", expected=stated, actual=actual))
    canon = serialize(doc)
    if canon != raw:
        at = next((i for i, (a, b) in enumerate(zip(canon, raw)) if a != b), min(len(canon), len(raw)))
        errors.append(VerifyError(f"manifest bytes differ from its canonical serialization at byte {at}",
                                  kind="mismatch", path=where, expected=len(canon), actual=len(raw),
                                  hint="manifests are written with sorted keys, indent 2 and a final newline"))
    return errors


def compare_mappings(expected: Mapping[str, Any], actual: Mapping[str, Any], *, what: str,
                     where: str, tol: float | None = None) -> list[VerifyError]:
    """Distinct errors for keys missing from ``actual``, unexpected in it, and differing values."""
    errors: list[VerifyError] = []
    for key in expected:
        if key not in actual:
            errors.append(VerifyError(f"{what} '{key}' is in the manifest but missing", kind="missing",
                                      path=where, field=key))
    for key in actual:
        if key not in expected:
            errors.append(VerifyError(f"{what} '{key}' is present but not in the manifest", kind="unexpected",
                                      path=where, field=key))
    for key in expected:
        if key in actual and not values_equal(expected[key], actual[key], tol=tol):
            errors.append(VerifyError(f"{what} '{key}' differs", kind="mismatch", path=where, field=key,
                                      expected=expected[key], actual=actual[key]))
    return errors


def values_equal(a: Any, b: Any, *, tol: float | None = None) -> bool:
    """Equality with an optional absolute tolerance for floats, recursing into dicts and lists."""
    if tol is not None and isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(float(a) - float(b)) <= tol
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k], tol=tol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y, tol=tol) for x, y in zip(a, b))
    return a == b


def compare_files(expected: list[FileEntry], actual: Mapping[str, FileEntry], *,
                  where: str) -> list[VerifyError]:
    """Files of the release vs the manifest: missing, unexpected, or a size/sha256 mismatch."""
    errors: list[VerifyError] = []
    exp = {f.path: f for f in expected}
    for path, f in exp.items():
        a = actual.get(path)
        if a is None:
            errors.append(VerifyError("file listed in the manifest is missing", kind="missing", path=path,
                                      hint=f"manifest {where}"))
        elif a.sha256 != f.sha256 or a.size != f.size:
            errors.append(VerifyError("file sha256 differs from the manifest", kind="mismatch", path=path,
                                      field="sha256", expected=f"{f.sha256} ({f.size} B)",
                                      actual=f"{a.sha256} ({a.size} B)"))
    for path in actual:
        if path not in exp:
            errors.append(VerifyError("file is not listed in the manifest", kind="unexpected", path=path,
                                      hint=f"manifest {where}"))
    return errors


def compare_row_hashes(expected_split_sha: str, stated: list[str], recomputed: list[str], *,
                       where: str, split_sha: str, field: str = "row_sha256") -> list[VerifyError]:
    """Row by row: a stored row hash that does not match its content, then the split hash.

    ``field``: the column holding each row's hash, named in the error (``trajectory_sha256`` for a
    trajectory row: naming ``row_sha256`` there sent a reader to the wrong column)."""
    errors: list[VerifyError] = []
    for n, (s, r) in enumerate(zip(stated, recomputed)):
        if s != r:
            errors.append(VerifyError(f"row content does not match its {field}", kind="mismatch",
                                      path=where, row=n, field=field, expected=s, actual=r))
    if split_sha != expected_split_sha:
        errors.append(VerifyError("split content hash differs from the manifest (rows changed, added, "
                                  "dropped or reordered)", kind="mismatch", path=where, field="sha256",
                                  expected=expected_split_sha, actual=split_sha))
    return errors


__all__ = ["FORMAT", "FORMAT_VERSION", "RELEASE_KEYS", "PROVENANCE_KEYS", "FileEntry", "SplitEntry", "Manifest", "serialize",
           "manifest_from_dict", "load_manifest", "check_manifest_integrity", "compare_mappings",
           "compare_files", "compare_row_hashes", "values_equal"]
