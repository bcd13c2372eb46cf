"""Push writes the real repository id into what it publishes, refuses placeholders, and is idempotent.

The real ``huggingface_hub`` client runs over the recording in-memory Hub (``tests.support.fakehub``).
"""

from __future__ import annotations

import json

import pytest

from builder.cli import main as cli_main
from builder.release import write_release
from builder.release.card import UNSET_REPO, default_template
from tests.support.fakehub import TEST_TOKEN as TOKEN, FakeHub
from builder.release.push import push_release
from tests.support.synthetic import hand_written_tasks, small_release_splits, uniform_target
from swe_taskflow.errors import PublishError
from swe_taskflow.manifest import load_manifest

REPO = "some-org/taskflow-name"


def _write(root, *, version="v1.0", tasks=None, repo_id=None, template=None):
    uniform_target(root / "target.json")
    write_release(root / "rel", name="pushed", version=version,
                  splits=small_release_splits(tasks or hand_written_tasks()), target_path=root / "target.json",
                  provenance={"source": {"source": "hand-written", "revision": "1"}}, repo_id=repo_id,
                  description="[hand-written] a release for push tests", card_template=template)
    return root / "rel"


def _pushed(hub: FakeHub, path: str, rev: str | None = None) -> bytes:
    repo = hub.repos[REPO]
    files = repo.files if rev is None else next(c for c in repo.commits if c["oid"] == repo.tags.get(rev, rev))["files"]
    return hub.blobs[files[path]["sha256"]]


def test_push_writes_the_real_repository_id_into_the_pushed_card(tmp_path, hub, monkeypatch):
    import huggingface_hub.constants as const
    from swe_taskflow.verify import verify_release
    rel = _write(tmp_path)
    local_card = (rel / "README.md").read_bytes()
    assert UNSET_REPO in local_card.decode()          # no repository yet: said so, no fake id
    result = push_release(rel, REPO, endpoint=hub.endpoint, record_dir=tmp_path / "manifests")
    assert result.rewritten and not result.already_published
    card = _pushed(hub, "README.md").decode()
    assert f'load_dataset("{REPO}", split="single_prompt")' in card
    assert f"swe-taskflow verify {REPO} --revision v1.0" in card
    assert "ORG/" not in card and UNSET_REPO not in card and "{{" not in card
    manifest = json.loads(_pushed(hub, "manifests/pushed-v1.0.json"))
    assert manifest["release"]["repo_id"] == REPO
    assert json.loads(_pushed(hub, "croissant.json"))["url"] == f"https://huggingface.co/datasets/{REPO}"
    assert (rel / "README.md").read_bytes() == local_card            # the local folder is unchanged
    recorded = json.loads((tmp_path / "manifests" / "pushed-v1.0.json").read_text())
    assert recorded["release"]["repo_id"] == REPO and recorded == manifest
    # the rows are the same: only the card, croissant.json and manifest changed
    local, _ = load_manifest(rel / "manifests/pushed-v1.0.json")
    assert [s["sha256"] for s in manifest["splits"]] == [s.sha256 for s in local.splits]
    monkeypatch.setattr(const, "HF_HUB_CACHE", str(tmp_path / "cache"))
    report = verify_release(REPO, revision="v1.0")
    assert report.ok, [str(e) for e in report.errors]


def test_repushing_the_same_release_is_a_no_op_and_another_release_is_refused(tmp_path, hub, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rel = _write(tmp_path / "a", repo_id=REPO)
    assert cli_main(["push", str(rel), "--repo", REPO]) == 0
    commits = len(hub.repos[REPO].commits)
    capsys.readouterr()
    assert cli_main(["push", str(rel), "--repo", REPO]) == 0
    out = capsys.readouterr()
    assert "already published at that revision" in out.out and "tag v1.0" in out.out
    assert len(hub.repos[REPO].commits) == commits
    # same version, other rows: the existing tag holds a different release -> refused, nothing sent
    other = _write(tmp_path / "b", repo_id=REPO, tasks=hand_written_tasks()[:2])
    assert cli_main(["push", str(other), "--repo", REPO]) == 2
    err = capsys.readouterr().err
    assert "tag 'v1.0'" in err and "already holds a different release" in err and "new version" in err
    assert len(hub.repos[REPO].commits) == commits and TOKEN not in err
    # a new version of it goes through
    newer = _write(tmp_path / "c", repo_id=REPO, version="v1.1", tasks=hand_written_tasks()[:2])
    assert cli_main(["push", str(newer), "--repo", REPO]) == 0
    assert set(hub.repos[REPO].tags) == {"v1.0", "v1.1"}


def test_main_already_holding_the_release_gets_only_the_tag(tmp_path, hub):
    rel = _write(tmp_path, repo_id=REPO)
    first = push_release(rel, REPO, tag="t1", endpoint=hub.endpoint)
    second = push_release(rel, REPO, tag="t2", endpoint=hub.endpoint)
    assert second.commit_oid == first.commit_oid and not second.already_published
    assert hub.repos[REPO].tags == {"t1": first.commit_oid, "t2": first.commit_oid}


def test_a_card_holding_a_placeholder_is_refused(tmp_path, hub):
    template = tmp_path / "card.md"
    template.write_text(default_template().read_text() + '\nload_dataset("ORG/whatever")\n')
    rel = _write(tmp_path, repo_id=REPO, template=template)
    with pytest.raises(PublishError, match="placeholder.*ORG/whatever"):
        push_release(rel, REPO, endpoint=hub.endpoint)
    assert not [e for e in hub.exchange if "/api/" in e.url]     # refused before any request


def test_the_placeholder_repo_id_is_refused_naming_the_folder_passed(tmp_path, hub, capsys):
    """--repo ORG/NAME (the card's own placeholder): the error names the release folder the user passed, not the
    temporary copy written for that id, which no longer exists when the error is read."""
    rel = _write(tmp_path)
    assert cli_main(["push", str(rel), "--repo", "ORG/NAME"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"swe-taskflow: error: {rel}: ") and len(err.strip().splitlines()) == 1, err
    assert "swe-taskflow-push-" not in err and '"ORG/NAME"' in err and "your own ORG/NAME" in err
    assert not [e for e in hub.exchange if "/api/" in e.url]     # refused before any request


def test_upload_bars_stay_off_when_not_on_a_terminal(tmp_path, hub, monkeypatch):
    from huggingface_hub import HfApi
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars
    before = are_progress_bars_disabled()
    enable_progress_bars()
    seen = []
    real = HfApi.create_commit

    def spy(self, *a, **k):
        seen.append(are_progress_bars_disabled())
        return real(self, *a, **k)

    monkeypatch.setattr(HfApi, "create_commit", spy)
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    try:
        push_release(_write(tmp_path, repo_id=REPO), REPO, endpoint=hub.endpoint)
        assert seen == [True] and not are_progress_bars_disabled()     # off for the upload, back on after
    finally:
        if before:
            disable_progress_bars()
