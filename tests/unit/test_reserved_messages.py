"""The reserved messages (``interaction-sessions/reserved_messages.sha256``: kept for an independent evaluation)
are never labelled, exemplified or fitted on: no label file in tests/data and no exemplar covers one, in any copy
(a copy in another session has the same stripped text, hence the same hash)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.classify.embedded import load_exemplars
from tools.labeling import corpus_index, reserved_hashes, text_sha256

DATA = Path(__file__).parents[1] / "data"
LABEL_FILES = sorted(DATA.glob("*labels*.jsonl"))


@pytest.fixture(scope="module")
def reserved(shared_dir) -> frozenset[str]:
    hashes = reserved_hashes(shared_dir / "data" / "interaction-sessions" / "reserved_messages.sha256")
    assert len(hashes) >= 300  # the file as issue 34 describes it: a test on an empty list could not fail
    return hashes


@pytest.fixture(scope="module")
def corpus(sessions_file):
    return corpus_index(sessions_file)


@pytest.mark.data
@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.name)
def test_no_label_row_covers_a_reserved_message(path, reserved, corpus):
    from tools.labeling import read_keys

    covered = [f"{sid}#{idx}" for sid, idx in read_keys(path)
               if (sid, idx) in corpus and text_sha256(corpus[(sid, idx)][2]) in reserved]
    assert covered == []


@pytest.mark.data
def test_no_exemplar_is_a_reserved_message(reserved):
    assert [t for t in load_exemplars().texts if text_sha256(t) in reserved] == []
