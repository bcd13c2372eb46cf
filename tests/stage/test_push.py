"""Push: the real huggingface_hub client over a recording httpx2.MockTransport (an in-memory Hub)."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil

import pytest

from builder.cli import main as cli_main
from builder.release import write_release
from tests.support.fakehub import TEST_TOKEN as TOKEN, FakeHub
from builder.release.push import push_release
from tests.support.synthetic import hand_written_tasks, small_release_splits, uniform_target
from swe_taskflow.errors import PublishError
from swe_taskflow.manifest import load_manifest

REPO = "test-org/taskflow-push"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("push")
    uniform_target(root / "target.json")
    write_release(root / "rel", name="pushed", version="v1.0", splits=small_release_splits(hand_written_tasks()),
                  target_path=root / "target.json", provenance={"source": {"benchmark": "hand-written"}},
                  repo_id=REPO)
    return root / "rel"


def _commit_lines(hub: FakeHub) -> list[dict]:
    ex = [e for e in hub.exchange if e.method == "POST" and "/commit/" in e.url]
    assert len(ex) == 1, "exactly one commit"
    return [json.loads(line) for line in ex[0].body.decode().splitlines() if line.strip()]


def test_push_commits_exactly_the_manifest(release, hub, tmp_path, capsys):
    manifest, raw = load_manifest(next((release / "manifests").glob("*.json")))
    result = push_release(release, REPO, record_dir=tmp_path / "manifests", endpoint=hub.endpoint)
    repo = hub.repos[REPO]
    head_before = repo.commits[0]["oid"]
    lines = _commit_lines(hub)
    header = lines[0]["value"]
    assert header["parentCommit"] == head_before == result.parent_commit   # atomic: refuses a moved head
    lfs = {x["value"]["path"]: x["value"] for x in lines if x["key"] == "lfsFile"}
    regular = {x["value"]["path"]: base64.b64decode(x["value"]["content"]) for x in lines if x["key"] == "file"}
    expected = {f.path: f for f in manifest.all_files()}
    sent = set(lfs) | set(regular)
    assert sent == set(expected) | {manifest.path_in_release}
    for path, v in lfs.items():   # every shard went through LFS with the manifest's sha256 as its oid
        assert v["algo"] == "sha256" and v["oid"] == expected[path].sha256 and v["size"] == expected[path].size
        assert hashlib.sha256(hub.lfs[v["oid"]]).hexdigest() == v["oid"]
    assert {p for p in lfs} == {f.path for s in manifest.splits for f in s.files}
    for path, data in regular.items():
        want = raw if path == manifest.path_in_release else None
        assert data == want or hashlib.sha256(data).hexdigest() == expected[path].sha256
    # the tag points at the commit, and the post-check saw every file with the manifest's hash
    assert repo.tags["v1.0"] == result.commit_oid == repo.head
    assert result.files == {**{p: f.sha256 for p, f in expected.items()},
                            manifest.path_in_release: hashlib.sha256(raw).hexdigest()}
    tree_calls = [e for e in hub.exchange if "/tree/" in e.url]
    assert tree_calls and tree_calls[-1].url.split("/tree/")[1].startswith("v1.0")
    # the project's manifests/ gets a byte copy and the published record
    assert (tmp_path / "manifests" / manifest.path_in_release.split("/")[1]).read_bytes() == raw
    record = json.loads((tmp_path / "manifests" / f"{manifest.release_id}.published.json").read_text())
    assert record["commit_oid"] == result.commit_oid and record["tag"] == "v1.0"
    # the token went only into Authorization headers, never into output, files or bodies
    out = capsys.readouterr()
    assert TOKEN not in out.out + out.err
    repo_calls = [e for e in hub.exchange if "/api/datasets/" in e.url or "/api/repos/" in e.url]
    assert repo_calls and all(e.headers.get("authorization") == f"Bearer {TOKEN}" for e in repo_calls)
    assert all(e.headers.get("authorization") in (None, f"Bearer {TOKEN}") for e in hub.exchange)
    assert not any(TOKEN.encode() in e.body for e in hub.exchange)
    assert TOKEN not in (tmp_path / "manifests" / f"{manifest.release_id}.published.json").read_text()


def test_cli_push_never_prints_the_token(release, hub, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert cli_main(["push", str(release), "--repo", REPO, "--tag", "v1.0-cli", "--private"]) == 0
    out = capsys.readouterr()
    assert "tag v1.0-cli" in out.out and "match the manifest sha256" in out.out
    assert TOKEN not in out.out + out.err
    assert hub.repos[REPO].private
    # pushing the same release to the same tag again: already published, nothing sent, exit 0
    n_exchanges = len(hub.exchange)
    assert cli_main(["push", str(release), "--repo", REPO, "--tag", "v1.0-cli"]) == 0
    out = capsys.readouterr()
    assert "already published at that revision" in out.out and TOKEN not in out.err + out.out
    sent = hub.exchange[n_exchanges:]
    assert not [e for e in sent if e.method == "POST" and ("/commit/" in e.url or "/tag/" in e.url
                                                          or "/lfs/" in e.url)]


def test_push_refuses_a_release_that_does_not_verify(release, hub, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    readme = bad / "README.md"
    readme.write_bytes(readme.read_bytes().replace(b"TFAS", b"TFAZ", 1))
    with pytest.raises(PublishError, match="does not verify.*README.md"):
        push_release(bad, REPO, endpoint=hub.endpoint)
    assert not [e for e in hub.exchange if "/api/datasets/" in e.url or "/api/repos/" in e.url]  # nothing sent


def test_push_fails_when_the_head_moved(release, hub, monkeypatch):
    from huggingface_hub import HfApi
    real = HfApi.dataset_info

    def stale(self, *a, **k):   # someone commits between our read of the head and our commit
        info = real(self, *a, **k)
        hub._add_commit(hub.repos[REPO], {"other.txt": {"data": b"x", "lfs": False}}, "concurrent")
        return info

    monkeypatch.setattr(HfApi, "dataset_info", stale)
    with pytest.raises(PublishError, match="create_commit.*412"):
        push_release(release, REPO, endpoint=hub.endpoint)


def test_push_without_a_token(release, hub, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")
    import huggingface_hub.constants as const
    monkeypatch.setattr(const, "HF_TOKEN_PATH", "/nonexistent-hf-home/token")
    monkeypatch.setattr(const, "HF_STORED_TOKENS_PATH", "/nonexistent-hf-home/stored_tokens")
    with pytest.raises(PublishError, match="no Hugging Face token"):
        push_release(release, REPO, endpoint=hub.endpoint)


def test_verify_a_hub_revision(release, hub, monkeypatch, tmp_path):
    import huggingface_hub.constants as const
    from swe_taskflow.verify import verify_release
    monkeypatch.setattr(const, "HF_HUB_CACHE", str(tmp_path / "cache"))
    push_release(release, REPO, tag="v9", endpoint=hub.endpoint)
    report = verify_release(REPO, revision="v9")
    assert report.ok, [str(e) for e in report.errors]
    assert report.root == f"{REPO}@v9" and report.rows > 0
    # a later commit on the Hub that changes one README byte: that revision no longer verifies
    repo = hub.repos[REPO]
    readme = hub.blobs[repo.files["README.md"]["sha256"]]
    hub._add_commit(repo, {"README.md": {"data": readme.replace(b"TFAS", b"TFAZ", 1), "lfs": False}}, "edit card")
    monkeypatch.setattr(const, "HF_HUB_CACHE", str(tmp_path / "cache2"))
    bad = verify_release(REPO, revision=repo.head)
    assert any(e.path == "README.md" and "sha256 differs" in str(e) for e in bad.errors), [str(e) for e in bad.errors]
