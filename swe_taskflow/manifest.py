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
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from . import untrusted
from .errors import InputError, VerifyError
from .hashing import canonical_sha256
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
        return {**body, "manifest_sha256": canonical_sha256(body)}

    def to_bytes(self) -> bytes:
        return serialize(self.to_dict())


def _plain(obj: Any) -> Any:
    return json.loads(json.dumps(obj, sort_keys=True))


def serialize(doc: Mapping[str, Any]) -> bytes:
    """The one byte form of a manifest file (sorted keys, indent 2, UTF-8, final newline)."""
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class _Doc:
    """Typed access to a manifest document: a wrong type, range or shape is one InputError naming the file and
    the field's path (``splits[0].tfas``), never a TypeError further down."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, fld: str, what: str, value: Any) -> InputError:
        return InputError(f"malformed manifest: expected {what}", path=self.where, field=fld, actual=_short(value))

    def obj(self, d: Mapping[str, Any], key: str, fld: str, *, optional: bool = False) -> dict[str, Any] | None:
        v = d.get(key)
        if v is None and optional:
            return None
        if not isinstance(v, Mapping):
            raise self.fail(fld, "an object", v)
        return dict(v)

    def string(self, d: Mapping[str, Any], key: str, fld: str, *, optional: bool = False, hex64: bool = False) -> Any:
        v = d.get(key)
        if v is None and optional:
            return None
        if not isinstance(v, str):
            raise self.fail(fld, "a string", v)
        if hex64 and not _HEX64.match(v):
            raise self.fail(fld, "a sha256 (64 lowercase hex digits)", v)
        return v

    def count(self, d: Mapping[str, Any], key: str, fld: str) -> int:
        v = d.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise self.fail(fld, "a non-negative whole number", v)
        return v

    def array(self, d: Mapping[str, Any], key: str, fld: str, *, optional: bool = False) -> list[Any]:
        v = d.get(key)
        if v is None and optional:
            return []
        if not isinstance(v, list):
            raise self.fail(fld, "a list", v)
        return v

    def file(self, v: Any, fld: str) -> FileEntry:
        if not isinstance(v, Mapping):
            raise self.fail(fld, "a file entry (an object with path, sha256, size)", v)
        path = self.string(v, "path", f"{fld}.path")
        pure = PurePosixPath(path)
        if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path or "\0" in path:
            raise self.fail(f"{fld}.path", "a relative path inside the release", path)
        return FileEntry(path=path, sha256=self.string(v, "sha256", f"{fld}.sha256", hex64=True),
                         size=self.count(v, "size", f"{fld}.size"))

    def tfas(self, v: Any, fld: str) -> dict[str, float] | None:
        if v is None:
            return None
        if not isinstance(v, Mapping):
            raise self.fail(fld, "an object of numbers", v)
        for k, x in v.items():
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise self.fail(f"{fld}.{k}", "a finite number", x)
        return dict(v)


def _short(value: Any) -> Any:
    """A value for an error: its type name when it is a container (never a whole document)."""
    if isinstance(value, (dict, list)):
        return f"{type(value).__name__} of {len(value)}"
    return value


def _file(d: Any, where: str, fld: str) -> FileEntry:
    return _Doc(where).file(d, fld)


def manifest_from_dict(doc: Mapping[str, Any], *, where: str = "<manifest>") -> Manifest:
    """Parse a manifest document: the format and version are checked, not guessed, and every field that is
    later read is checked for type, range and shape here (one InputError naming the file and the field)."""
    if not isinstance(doc, Mapping):
        raise InputError("malformed manifest: expected a JSON object", path=where, actual=_short(doc))
    check_format(doc, FORMAT, FORMAT_VERSION, kind="manifest", name="swe-taskflow manifest", where=where)
    t = _Doc(where)
    splits = []
    for n, s in enumerate(t.array(doc, "splits", "splits")):
        at = f"splits[{n}]"
        if not isinstance(s, Mapping):
            raise t.fail(at, "an object", s)
        splits.append(SplitEntry(
            config=t.string(s, "config", f"{at}.config"), name=t.string(s, "name", f"{at}.name"),
            rows=t.count(s, "rows", f"{at}.rows"), sha256=t.string(s, "sha256", f"{at}.sha256", hex64=True),
            schema_sha256=t.string(s, "schema_sha256", f"{at}.schema_sha256", hex64=True),
            files=tuple(t.file(f, f"{at}.files[{i}]") for i, f in enumerate(t.array(s, "files", f"{at}.files"))),
            num_bytes=t.count(s, "num_bytes", f"{at}.num_bytes"),
            condition=t.string(s, "condition", f"{at}.condition", optional=True),
            question_pool=t.string(s, "question_pool", f"{at}.question_pool", optional=True),
            tfas=t.tfas(s.get("tfas"), f"{at}.tfas")))
    provenance = t.obj(doc, "provenance", "provenance", optional=True) or {}
    for key in ("selection", "stress"):
        if provenance.get(key) is not None:
            t.obj(provenance, key, f"provenance.{key}")
    questions = t.obj(doc, "questions", "questions", optional=True) or {}
    for qid in questions:   # null: a question published without a proof report
        t.string(questions, qid, f"questions.{qid}", hex64=True, optional=True)
    release = t.obj(doc, "release", "release", optional=True) or {}
    for key in RELEASE_KEYS:
        t.string(release, key, f"release.{key}", optional=True)
    return Manifest(
        name=t.string(doc, "name", "name"), version=t.string(doc, "version", "version"), provenance=provenance,
        package=t.obj(doc, "package", "package", optional=True) or {}, splits=tuple(splits), questions=questions,
        target=None if doc.get("target") is None else t.file(doc["target"], "target"),
        readme=t.file(doc.get("readme"), "readme"),
        extra_files=tuple(t.file(f, f"extra_files[{i}]")
                          for i, f in enumerate(t.array(doc, "extra_files", "extra_files", optional=True))),
        release={k: release.get(k) for k in RELEASE_KEYS},
        croissant=None if doc.get("croissant") is None else t.file(doc["croissant"], "croissant"),
        format_version=int(doc["format_version"]),
        manifest_sha256=t.string(doc, "manifest_sha256", "manifest_sha256", optional=True) or "")


def load_manifest(path: str | Path) -> tuple[Manifest, bytes]:
    """Read a manifest file (through :mod:`swe_taskflow.untrusted`: a regular file, bounded); returns the model
    and the raw bytes (for the canonical-form check)."""
    path = Path(path)
    if not os.path.lexists(path):
        raise VerifyError("manifest file is missing", kind="missing", path=str(path))
    raw = untrusted.read_bytes(path, "manifest")
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
    actual = canonical_sha256(body)
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
        elif a.size != f.size:   # decided by size: its bytes were never hashed
            errors.append(VerifyError("file size differs from the manifest (its bytes are not read)", kind="mismatch",
                                      path=path, field="size", expected=f"{f.size} B", actual=f"{a.size} B"))
        elif a.sha256 != f.sha256:
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
