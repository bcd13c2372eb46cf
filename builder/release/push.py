"""Publish a verified release folder to the Hub as one atomic commit, tag it, and check what landed.

Order: verify the folder (refuse otherwise) -> write the repository id into the card, croissant.json
and manifest of a copy when the release does not name it yet -> refuse a card with a placeholder ->
create the dataset repo if needed -> an existing tag holding this very release ends here (already
published), one holding another release is refused -> read the head commit -> one ``create_commit`` with ``parent_commit`` carrying every release file (and deleting
remote files the release does not have) -> tag -> list the tagged tree and compare every file with
the manifest (LFS files by the sha256 the Hub reports as their oid, others by git blob id).
The token comes from the argument, ``HF_TOKEN`` or the ``huggingface_hub`` login; it is never
printed, logged or put into an error message.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_taskflow.errors import PublishError
from swe_taskflow.hashing import git_blob_sha1
from swe_taskflow.hub_net import HubTimeoutError, hub_deadlines
from swe_taskflow.jsonl import write_json
from swe_taskflow.manifest import load_manifest
from swe_taskflow.owned import owned_temp
from swe_taskflow.verify import verify_folder

from .card import card_placeholders

KEEP_REMOTE = (".gitattributes",)


@dataclass
class PushResult:
    repo_id: str
    commit_oid: str
    parent_commit: str
    tag: str | None
    files: dict[str, str] = field(default_factory=dict)   # path -> sha256 confirmed on the Hub
    already_published: bool = False   # the tag already held exactly this release: nothing was sent
    rewritten: bool = False           # the card and manifest were rewritten to name repo_id

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
                 endpoint: str | None = None, progress: bool | None = None,
                 hub_timeout: float | None = None) -> PushResult:
    """Push the release folder at ``path`` to dataset repo ``repo_id``; returns what landed.

    When the release does not already name ``repo_id``, a copy is written with it (card,
    croissant.json, manifest; rows unchanged) and that copy is pushed; the folder stays as it was.
    A card still holding a placeholder is refused. ``tag`` defaults to the manifest's version; when
    the tag already exists and holds exactly this release, nothing is sent (``already_published``),
    when it holds something else the push is refused. ``record_dir`` (e.g. the project's
    ``manifests/``) receives a byte copy of the pushed manifest and ``<release>.published.json``.
    ``progress``: upload bars (default: only when stderr is a terminal). ``hub_timeout``: seconds every Hub
    request may wait to connect or between two bytes (default ``SWE_TASKFLOW_HUB_TIMEOUT`` or 60; see
    :mod:`swe_taskflow.hub_net`); a missed deadline ends the push with one line naming the endpoint.
    """
    from .writer import REPO_ID_RE, rewrite_release
    if not REPO_ID_RE.match(repo_id or ""):
        raise PublishError("repository id must look like ORG/NAME", path=str(repo_id))
    hub_deadlines(hub_timeout)
    root = Path(path)
    report = verify_folder(root)
    if not report.ok:
        first = report.errors[0]
        raise PublishError(f"refusing to push a release that does not verify ({len(report.errors)} error(s); "
                           f"first: {first})", path=str(root), hint="run `swe-taskflow verify` for the full list")
    manifest, _ = load_manifest(root / report.manifest_path)
    with owned_temp("swe-taskflow-push-") as tmp:
        rewritten = manifest.repo_id != repo_id
        if rewritten:   # the card and croissant.json must name the repository they are published in
            root = Path(tmp) / "release"
            rewrite_release(path, root, repo_id=repo_id)
        result = _push_folder(root, repo_id, shown=Path(path), tag=tag, private=private, token=token,
                              record_dir=record_dir, endpoint=endpoint, progress=progress)
        result.rewritten = rewritten
        return result


def _push_folder(root: Path, repo_id: str, *, shown: Path, tag, private, token, record_dir, endpoint,
                 progress) -> PushResult:
    """Push ``root``: the folder the user passed (``shown``) or the copy written for ``repo_id``."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RevisionNotFoundError

    manifest_path, manifest, raw = _publishable_manifest(root, repo_id, shown)
    mpath = root / manifest_path
    tag = tag or manifest.version
    tok = _resolve_token(token)
    hub = _Hub(HfApi(endpoint=endpoint, token=tok), repo_id, tok)
    expected_sha = {f.path: f.sha256 for f in manifest.all_files()}
    expected_sha[manifest_path] = hashlib.sha256(raw).hexdigest()
    hub.call("create_repo", hub.api.create_repo, repo_id, repo_type="dataset", private=private, exist_ok=True)
    try:
        tagged = hub.tree(tag)
    except RevisionNotFoundError:
        tagged = None
    if tagged is not None:   # the tag exists: the same release is done, another one is refused
        result = _already_published(hub, tag, tagged, expected_sha, root)
    else:
        parent, oid = _commit_release(hub, root, manifest, manifest_path, expected_sha, progress)
        if tag:
            hub.call("create_tag", hub.api.create_tag, repo_id, tag=tag, revision=oid, repo_type="dataset",
                     tag_message=f"{manifest.name} {manifest.version}")
        problems, confirmed = _compare_tree(hub.tree(tag or oid), expected_sha, root)
        if problems:
            raise PublishError("the Hub's files differ from the manifest: " + "; ".join(problems), path=repo_id)
        result = PushResult(repo_id, oid, parent, tag, confirmed)
    _record(record_dir, mpath, manifest, result)
    return result


def _publishable_manifest(root: Path, repo_id: str, shown: Path) -> tuple[str, Any, bytes]:
    """(manifest path, manifest, its bytes) of a folder that verifies and whose card names ``repo_id``. Errors
    name ``shown``, the folder the user passed: a copy written for ``repo_id`` is gone when they are read."""
    copy = root != shown
    report = verify_folder(root)
    if not report.ok:
        raise PublishError(f"the release written for {repo_id} does not verify: {report.errors[0]}", path=str(shown))
    manifest, raw = load_manifest(root / report.manifest_path)
    held = list(dict.fromkeys(card_placeholders((root / "README.md").read_text(encoding="utf-8"))))
    if held or manifest.repo_id != repo_id:
        raise PublishError(f"the dataset card {f'written for {repo_id} ' if copy else ''}still holds a placeholder: "
                           + ", ".join(held or ["repo_id"]), path=str(shown if copy else shown / "README.md"),
                           hint="pass --repo with your own ORG/NAME" if f'"{repo_id}"' in held
                           else "set [release] repo_id or pass --repo")
    return report.manifest_path, manifest, raw


class _Hub:
    """Hub calls for one dataset repo whose failures become one-line PublishErrors with the token scrubbed."""

    def __init__(self, api: Any, repo_id: str, token: str) -> None:
        self.api, self.repo_id, self._token = api, repo_id, token

    def call(self, call: str, fn, *args, **kw):
        from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

        tok, repo_id = self._token, self.repo_id
        try:
            return fn(*args, **kw)
        except RevisionNotFoundError:
            raise
        except HubTimeoutError as exc:   # names the endpoint and the setting to raise; never the token
            raise HubTimeoutError(f"{call}: {_scrub(exc.message, tok)}", path=repo_id) from None
        except HfHubHTTPError as exc:
            code = getattr(getattr(exc, "response", None), "status_code", "?")
            raise PublishError(f"Hub refused {call} (HTTP {code}): {_scrub(str(exc).splitlines()[0], tok)}",
                               path=repo_id) from None
        except ValueError as exc:
            raise PublishError(f"{call} failed: {_scrub(str(exc), tok)}", path=repo_id) from None
        except Exception as exc:  # transport errors (connection, timeout): one line, token scrubbed
            raise PublishError(f"{call} failed ({type(exc).__name__}: {_scrub(str(exc), tok)})",
                               path=repo_id) from None

    def tree(self, revision: str) -> dict[str, Any]:
        """The repo's files at ``revision`` by path (folders left out)."""
        return {f.path: f for f in self.call("list_repo_tree", lambda: list(self.api.list_repo_tree(
            self.repo_id, repo_type="dataset", revision=revision, recursive=True))) if hasattr(f, "blob_id")}


def _already_published(hub: _Hub, tag: str, tagged: dict[str, Any], expected_sha: dict[str, str],
                       root: Path) -> PushResult:
    """The result of a tag that already holds exactly this release; another release under it is refused."""
    problems, confirmed = _compare_tree(tagged, expected_sha, root)
    if problems:
        raise PublishError(f"tag '{tag}' of {hub.repo_id} already holds a different release ({len(problems)} "
                           f"difference(s); first: {problems[0]})", path=hub.repo_id,
                           hint="publish a new version, or pass another --tag")
    oid = hub.call("repo_info", hub.api.dataset_info, hub.repo_id, revision=tag).sha
    return PushResult(hub.repo_id, oid, oid, tag, confirmed, already_published=True)


def _commit_release(hub: _Hub, root: Path, manifest, manifest_path: str, expected_sha: dict[str, str],
                    progress: bool | None) -> tuple[str, str]:
    """(parent, commit) after one commit on main making it the release; no commit when main already is."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    info = hub.call("repo_info", hub.api.dataset_info, hub.repo_id, revision="main")
    parent = info.sha
    head_problems, _ = _compare_tree(hub.tree(parent), expected_sha, root)
    if not head_problems:   # main already holds exactly this release (e.g. a push whose tag step failed): tag it
        return parent, parent
    remote = {s.rfilename for s in (info.siblings or [])}
    ops: list[Any] = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(root / p))
                      for p in sorted(expected_sha)]
    stale = sorted(p for p in remote if p not in expected_sha and p not in KEEP_REMOTE)
    ops += [CommitOperationDelete(path_in_repo=p) for p in stale]
    for op in ops:   # what will be sent equals the manifest, checked before any upload
        if isinstance(op, CommitOperationAdd) and op.upload_info.sha256.hex() != expected_sha[op.path_in_repo]:
            raise PublishError("file changed after verification", path=op.path_in_repo)
    with _progress_bars(progress):
        oid = hub.call("create_commit", hub.api.create_commit, hub.repo_id, ops, repo_type="dataset",
                       commit_message=f"Release {manifest.name} {manifest.version}",
                       commit_description=f"manifest {manifest_path} sha256 {expected_sha[manifest_path]}",
                       parent_commit=parent).oid
    return parent, oid


def _compare_tree(landed: dict[str, Any], expected_sha: dict[str, str], root: Path) -> tuple[list[str], dict[str, str]]:
    """A Hub tree vs the release: differences, and the files confirmed (LFS by sha256, others by blob id)."""
    problems, confirmed = [], {}
    for p, sha in sorted(expected_sha.items()):
        f = landed.get(p)
        if f is None:
            problems.append(f"{p}: missing on the Hub")
        elif f.lfs is not None:
            if f.lfs.sha256 != sha:
                problems.append(f"{p}: Hub LFS sha256 {f.lfs.sha256} != manifest {sha}")
            else:
                confirmed[p] = f.lfs.sha256
        else:
            local = git_blob_sha1((root / p).read_bytes())
            if f.blob_id != local:
                problems.append(f"{p}: Hub blob id {f.blob_id} != local {local}")
            else:
                confirmed[p] = sha
    problems += [f"{p}: on the Hub but not in the release" for p in sorted(landed)
                 if p not in expected_sha and p not in KEEP_REMOTE]
    return problems, confirmed


def _record(record_dir, mpath: Path, manifest, result: PushResult) -> None:
    if record_dir is None:
        return
    rd = Path(record_dir)
    rd.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mpath, rd / mpath.name)
    write_json(rd / f"{manifest.release_id}.published.json", result.to_dict(), indent=2)


@contextlib.contextmanager
def _progress_bars(enabled: bool | None):
    """Upload bars only on a terminal: piped output would interleave one line per refresh."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars
    show = sys.stderr.isatty() if enabled is None else enabled
    was_disabled = are_progress_bars_disabled()
    if not show:
        disable_progress_bars()
    try:
        yield
    finally:
        if not show and not was_disabled:
            enable_progress_bars()


__all__ = ["push_release", "PushResult"]
