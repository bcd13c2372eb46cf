"""Publish a verified release folder to the Hub as one atomic commit, tag it, and check what landed.

Order: verify the folder (refuse otherwise) -> create the dataset repo if needed -> read the head
commit -> one ``create_commit`` with ``parent_commit`` carrying every release file (and deleting
remote files the release does not have) -> tag -> list the tagged tree and compare every file with
the manifest (LFS files by the sha256 the Hub reports as their oid, others by git blob id).
The token comes from the argument, ``HF_TOKEN`` or the ``huggingface_hub`` login; it is never
printed, logged or put into an error message.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_taskflow.errors import PublishError
from swe_taskflow.hashing import git_blob_sha1
from swe_taskflow.manifest import load_manifest
from swe_taskflow.verify import verify_folder

KEEP_REMOTE = (".gitattributes",)


@dataclass
class PushResult:
    repo_id: str
    commit_oid: str
    parent_commit: str
    tag: str | None
    files: dict[str, str] = field(default_factory=dict)   # path -> sha256 confirmed on the Hub

    def to_dict(self) -> dict[str, Any]:
        return {"repo_id": self.repo_id, "commit_oid": self.commit_oid, "parent_commit": self.parent_commit,
                "tag": self.tag, "files": dict(sorted(self.files.items()))}


def _scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def _resolve_token(token: str | None) -> str:
    if token:
        return token
    from huggingface_hub import get_token
    found = get_token()   # HF_TOKEN, then the stored login
    if not found:
        raise PublishError("no Hugging Face token", hint="set HF_TOKEN or run `hf auth login`")
    return found


def push_release(path: str | os.PathLike, repo_id: str, *, tag: str | None = None, private: bool = False,
                 token: str | None = None, record_dir: str | os.PathLike | None = None,
                 endpoint: str | None = None) -> PushResult:
    """Push the release folder at ``path`` to dataset repo ``repo_id``; returns what landed.

    ``tag`` defaults to the manifest's version. ``record_dir`` (e.g. the project's ``manifests/``)
    receives a byte copy of the manifest and ``<release>.published.json`` (repo, commit, tag).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    root = Path(path)
    report = verify_folder(root)
    if not report.ok:
        first = report.errors[0]
        raise PublishError(f"refusing to push a release that does not verify ({len(report.errors)} error(s); "
                           f"first: {first})", path=str(root), hint="run `swe-taskflow verify` for the full list")
    mpath = root / report.manifest_path
    manifest, raw = load_manifest(mpath)
    tag = tag or manifest.version
    tok = _resolve_token(token)
    api = HfApi(endpoint=endpoint, token=tok)
    expected = {f.path: f for f in manifest.all_files()}
    expected_sha = {p: f.sha256 for p, f in expected.items()}
    expected_sha[report.manifest_path] = hashlib.sha256(raw).hexdigest()

    def hub(call: str, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except HfHubHTTPError as exc:
            code = getattr(getattr(exc, "response", None), "status_code", "?")
            raise PublishError(f"Hub refused {call} (HTTP {code}): {_scrub(str(exc).splitlines()[0], tok)}",
                               path=repo_id) from None
        except ValueError as exc:
            raise PublishError(f"{call} failed: {_scrub(str(exc), tok)}", path=repo_id) from None
        except Exception as exc:  # transport errors (connection, timeout): one line, token scrubbed
            raise PublishError(f"{call} failed ({type(exc).__name__}: {_scrub(str(exc), tok)})",
                               path=repo_id) from None

    hub("create_repo", api.create_repo, repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = hub("repo_info", api.dataset_info, repo_id, revision="main")
    parent = info.sha
    remote = {s.rfilename for s in (info.siblings or [])}
    ops: list[Any] = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(root / p))
                      for p in sorted([*expected, report.manifest_path])]
    stale = sorted(p for p in remote if p not in expected_sha and p not in KEEP_REMOTE)
    ops += [CommitOperationDelete(path_in_repo=p) for p in stale]
    for op in ops:   # what will be sent equals the manifest, checked before any upload
        if isinstance(op, CommitOperationAdd) and op.upload_info.sha256.hex() != expected_sha[op.path_in_repo]:
            raise PublishError("file changed after verification", path=op.path_in_repo)
    commit = hub("create_commit", api.create_commit, repo_id, ops, repo_type="dataset",
                 commit_message=f"Release {manifest.name} {manifest.version}",
                 commit_description=f"manifest {report.manifest_path} sha256 {expected_sha[report.manifest_path]}",
                 parent_commit=parent)
    if tag:
        hub("create_tag", api.create_tag, repo_id, tag=tag, revision=commit.oid, repo_type="dataset",
            tag_message=f"{manifest.name} {manifest.version}")
    landed = {f.path: f for f in hub("list_repo_tree", lambda: list(api.list_repo_tree(
        repo_id, repo_type="dataset", revision=tag or commit.oid, recursive=True)))
              if hasattr(f, "blob_id")}
    result = PushResult(repo_id, commit.oid, parent, tag)
    problems = []
    for p, sha in sorted(expected_sha.items()):
        f = landed.get(p)
        if f is None:
            problems.append(f"{p}: missing on the Hub")
        elif f.lfs is not None:
            if f.lfs.sha256 != sha:
                problems.append(f"{p}: Hub LFS sha256 {f.lfs.sha256} != manifest {sha}")
            else:
                result.files[p] = f.lfs.sha256
        else:
            local = git_blob_sha1((root / p).read_bytes())
            if f.blob_id != local:
                problems.append(f"{p}: Hub blob id {f.blob_id} != local {local}")
            else:
                result.files[p] = sha
    extra = sorted(p for p in landed if p not in expected_sha and p not in KEEP_REMOTE)
    problems += [f"{p}: on the Hub but not in the release" for p in extra]
    if problems:
        raise PublishError("the Hub's files differ from the manifest: " + "; ".join(problems), path=repo_id)
    if record_dir is not None:
        rd = Path(record_dir)
        rd.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mpath, rd / mpath.name)
        (rd / f"{manifest.release_id}.published.json").write_text(
            json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return result


__all__ = ["push_release", "PushResult"]
