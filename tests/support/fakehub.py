"""An in-memory Hub behind an ``httpx2.MockTransport``: the real ``huggingface_hub`` client code runs
against it and every request is recorded.

No Hub-compatible server can run on these machines, so push is tested by driving the real client
(create_repo, validate-yaml, preupload, LFS batch + upload + verify, the NDJSON commit with
``parentCommit``, create_tag, list_repo_tree) through this transport. It implements only what those
calls need, checks what the real Hub checks for them (LFS content sha256, the parent commit, tag
conflicts), and refuses anything else with 404 so an unexpected call shows up in a test.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from swe_taskflow.hashing import git_blob_sha1

ENDPOINT = "https://hub.invalid"
#: Files stored in LFS (the Hub's default .gitattributes has *.parquet; large files always go to LFS).
LFS_SUFFIXES = (".parquet", ".arrow", ".gz")
LFS_MIN_SIZE = 10 * 1024 * 1024


@dataclass
class Exchange:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    status: int = 0


@dataclass
class FakeRepo:
    repo_id: str
    private: bool
    head: str
    commits: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


class FakeHub:
    """A recording in-memory dataset Hub; ``client_factory`` plugs into ``set_client_factory``."""

    def __init__(self, endpoint: str = ENDPOINT) -> None:
        self.endpoint = endpoint
        self.repos: dict[str, FakeRepo] = {}
        self.lfs: dict[str, bytes] = {}
        self.blobs: dict[str, bytes] = {}   # sha256 -> content of every committed file
        self.exchange: list[Exchange] = []

    # ------------------------------------------------------------ plumbing
    def client_factory(self):
        import httpx2
        return httpx2.Client(transport=httpx2.MockTransport(self.handle), follow_redirects=False)

    def handle(self, request):
        import httpx2
        body = request.read()
        ex = Exchange(request.method, str(request.url), dict(request.headers), body)
        self.exchange.append(ex)
        status, payload, headers = self._route(request.method, request.url.path, body, dict(request.url.params))
        ex.status = status
        content = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return httpx2.Response(status, content=content, headers={"content-type": "application/json", **headers})

    def _route(self, method: str, path: str, body: bytes, params: dict[str, str]):
        path = unquote(path)
        routes = [
            ("POST", r"^/api/repos/create$", self._create_repo),
            ("POST", r"^/api/validate-yaml$", lambda m, b, p: (200, {"errors": [], "warnings": []}, {})),
            ("GET", r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/revision/(?P<rev>.+)$", self._repo_info),
            ("GET", r"^/api/datasets/(?P<repo>[^/]+/[^/]+)$", self._repo_info),
            ("POST", r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/preupload/(?P<rev>.+)$", self._preupload),
            ("POST", r"^/datasets/(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch$", self._lfs_batch),
            ("PUT", r"^/fake-lfs/(?P<oid>[0-9a-f]{64})$", self._lfs_put),
            ("POST", r"^/fake-lfs-verify/(?P<oid>[0-9a-f]{64})$", self._lfs_verify),
            ("POST", r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/commit/(?P<rev>.+)$", self._commit),
            ("POST", r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/tag/(?P<rev>.+)$", self._tag),
            ("GET", r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)(?P<sub>/.*)?$", self._tree),
            ("GET", r"^/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$", self._download),
            ("HEAD", r"^/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$", self._download),
        ]
        for m_, pattern, fn in routes:
            match = re.match(pattern, path)
            if m_ == method and match:
                return fn(match.groupdict(), body, params)
        return 404, {"error": f"fake hub: no route for {method} {path}"}, {}

    def _repo(self, repo_id: str) -> FakeRepo | None:
        return self.repos.get(repo_id)

    def _resolve(self, repo: FakeRepo, rev: str | None) -> dict[str, Any] | None:
        rev = rev or "main"
        oid = repo.head if rev == "main" else repo.tags.get(rev, rev)
        return next((c for c in repo.commits if c["oid"] == oid), None)

    @staticmethod
    def _not_found(what: str):
        return 404, {"error": f"{what} not found"}, {"X-Error-Code": "RepoNotFound"}

    _REV_NOT_FOUND = (404, {"error": "revision not found"}, {"X-Error-Code": "RevisionNotFound"})

    def _repo_commit(self, m, rev: str | None):
        """``(repo, commit, None)``, or ``(None, None, error response)`` for an unknown repo or revision."""
        repo = self._repo(m["repo"])
        if repo is None:
            return None, None, self._not_found("repository")
        commit = self._resolve(repo, rev)
        if commit is None:
            return None, None, self._REV_NOT_FOUND
        return repo, commit, None

    # ------------------------------------------------------------ endpoints
    def _create_repo(self, m, body, params):
        req = json.loads(body)
        repo_id = f"{req.get('organization') or 'user'}/{req['name']}"
        if repo_id in self.repos:
            return 409, {"error": "You already created this dataset repo", "url": f"{self.endpoint}/datasets/{repo_id}"}, {}
        repo = FakeRepo(repo_id, bool(req.get("private") or req.get("visibility") == "private"), head="")
        ga = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
        self._add_commit(repo, {".gitattributes": {"data": ga, "lfs": False}}, "initial commit")
        self.repos[repo_id] = repo
        return 200, {"url": f"{self.endpoint}/datasets/{repo_id}", "name": repo_id}, {}

    def _add_commit(self, repo: FakeRepo, files: dict[str, dict[str, Any]], summary: str,
                    deleted: tuple[str, ...] = ()) -> str:
        tree = {k: v for k, v in (self._resolve(repo, None) or {"files": {}})["files"].items() if k not in deleted}
        for path, f in files.items():
            data = f["data"]
            self.blobs[hashlib.sha256(data).hexdigest()] = data
            tree[path] = {"size": len(data), "lfs": f["lfs"], "sha256": hashlib.sha256(data).hexdigest(),
                          "blob_id": git_blob_sha1(data)}
        oid = hashlib.sha1(json.dumps([repo.head, summary, sorted((k, v["sha256"]) for k, v in tree.items())])
                           .encode()).hexdigest()
        repo.commits.append({"oid": oid, "parent": repo.head or None, "summary": summary, "files": tree})
        repo.head = oid
        repo.files = tree
        return oid

    def _repo_info(self, m, body, params):
        repo, commit, error = self._repo_commit(m, m.get("rev"))
        if error:
            return error
        return 200, {"id": repo.repo_id, "sha": commit["oid"], "private": repo.private,
                     "siblings": [{"rfilename": p} for p in sorted(commit["files"])]}, {}

    def _preupload(self, m, body, params):
        repo = self._repo(m["repo"])
        if repo is None:
            return self._not_found("repository")
        files = json.loads(body)["files"]
        out = []
        for f in files:
            lfs = f["path"].endswith(LFS_SUFFIXES) or int(f["size"]) >= LFS_MIN_SIZE
            prev = repo.files.get(f["path"])
            out.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                        "oid": None if prev is None else (prev["sha256"] if prev["lfs"] else prev["blob_id"])})
        return 200, {"files": out, "commitOid": repo.head}, {}

    def _lfs_batch(self, m, body, params):
        if self._repo(m["repo"]) is None:
            return self._not_found("repository")
        req = json.loads(body)
        objs = []
        for o in req["objects"]:
            entry = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.lfs:
                entry["actions"] = {"upload": {"href": f"{self.endpoint}/fake-lfs/{o['oid']}"},
                                    "verify": {"href": f"{self.endpoint}/fake-lfs-verify/{o['oid']}"}}
            objs.append(entry)
        return 200, {"transfer": "basic", "objects": objs, "hash_algo": "sha256"}, {}

    def _lfs_put(self, m, body, params):
        if hashlib.sha256(body).hexdigest() != m["oid"]:
            return 400, {"error": "content does not match its oid"}, {}
        self.lfs[m["oid"]] = body
        return 200, b"", {}

    def _lfs_verify(self, m, body, params):
        req = json.loads(body)
        ok = m["oid"] in self.lfs and len(self.lfs[m["oid"]]) == req.get("size")
        return (200, {}, {}) if ok else (422, {"error": "object not uploaded"}, {})

    def _commit(self, m, body, params):
        repo = self._repo(m["repo"])
        if repo is None:
            return self._not_found("repository")
        if m["rev"] != "main":
            return 400, {"error": "fake hub commits to main only"}, {}
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = next((x["value"] for x in lines if x["key"] == "header"), {})
        parent = header.get("parentCommit")
        if parent is not None and not repo.head.startswith(parent):
            return 412, {"error": "A commit has happened since. Please refresh and try again."}, {}
        files: dict[str, dict[str, Any]] = {}
        deleted = []
        for x in lines:
            v = x["value"]
            if x["key"] == "file":
                files[v["path"]] = {"data": base64.b64decode(v["content"]), "lfs": False}
            elif x["key"] == "lfsFile":
                data = self.lfs.get(v["oid"])
                if data is None or len(data) != v["size"]:
                    return 422, {"error": f"LFS object {v['oid']} for {v['path']} was not uploaded"}, {}
                files[v["path"]] = {"data": data, "lfs": True}
            elif x["key"] in ("deletedFile", "deletedFolder"):
                deleted.append(v["path"])
        oid = self._add_commit(repo, files, header.get("summary", ""), tuple(deleted))
        return 200, {"commitUrl": f"{self.endpoint}/datasets/{repo.repo_id}/commit/{oid}", "commitOid": oid,
                     "pullRequestUrl": None, "success": True}, {}

    def _tag(self, m, body, params):
        repo = self._repo(m["repo"])
        if repo is None:
            return self._not_found("repository")
        req = json.loads(body)
        if req["tag"] in repo.tags:
            return 409, {"error": f"Tag {req['tag']} already exists"}, {}
        commit = self._resolve(repo, m["rev"])
        if commit is None:
            return self._REV_NOT_FOUND
        repo.tags[req["tag"]] = commit["oid"]
        return 200, {}, {}

    def _download(self, m, body, params):
        repo, commit, error = self._repo_commit(m, m["rev"])
        if error:
            return error
        f = commit["files"].get(m["path"])
        if f is None:
            return 404, {"error": "entry not found"}, {"X-Error-Code": "EntryNotFound"}
        data = self._content(repo, commit, m["path"])
        headers = {"X-Repo-Commit": commit["oid"], "ETag": f'"{f["blob_id"]}"', "Content-Length": str(len(data))}
        if f["lfs"]:
            headers.update({"X-Linked-Etag": f'"{f["sha256"]}"', "X-Linked-Size": str(f["size"])})
        return 200, data, {**headers, "content-type": "application/octet-stream"}

    def _content(self, repo: FakeRepo, commit: dict[str, Any], path: str) -> bytes:
        return self.blobs[commit["files"][path]["sha256"]]

    def _tree(self, m, body, params):
        repo, commit, error = self._repo_commit(m, m["rev"])
        if error:
            return error
        out = []
        for path, f in sorted(commit["files"].items()):
            e = {"type": "file", "oid": f["blob_id"], "size": f["size"], "path": path}
            if f["lfs"]:
                e["lfs"] = {"oid": f["sha256"], "size": f["size"], "pointerSize": 134}
            out.append(e)
        return 200, out, {}


#: The token the recording Hub expects; tests check it never reaches an output.
TEST_TOKEN = "hf_TESTtokenDoNotPrint0123456789"


def install(monkeypatch, token: str) -> FakeHub:
    """A fresh FakeHub as the endpoint of the real client for one test (``monkeypatch`` undoes the rest;
    call ``uninstall()`` after): LFS uploads (no Xet server here), ``HF_TOKEN`` = ``token``."""
    import huggingface_hub.constants as const
    from huggingface_hub.utils import set_client_factory
    monkeypatch.setattr(const, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setenv("HF_TOKEN", token)
    fake = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
    monkeypatch.setattr(const, "ENDPOINT", fake.endpoint)
    set_client_factory(fake.client_factory)
    return fake


def uninstall() -> None:
    from huggingface_hub.utils import _http, set_client_factory
    set_client_factory(_http.default_client_factory)


__all__ = ["FakeHub", "Exchange", "ENDPOINT", "install", "uninstall"]
