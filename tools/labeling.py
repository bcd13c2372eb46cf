"""Draw, show and check batches of real SpecStory messages for careful readers (issue 34's labels).

The texts stay in ``../shared`` (not licensed for redistribution): a batch is a file of keys
``{"session_id", "index"}`` only, a reader sees the texts through ``show``, and a label file holds
``{session_id, index, intent, confidence, labeler, conventions}`` only (docs/label-conventions.md).

Never drawn, shown or labelled: a message whose ``text.strip()`` hashes to a line of
``interaction-sessions/reserved_messages.sha256`` (an independent evaluation set, in any session), a message
already in a label file (``tests/data/*labels*.jsonl``), or a second copy of a text already drawn.

Two pools, split by repository (the unit the classifier's cross-validation groups by):
- ``heldout``: the repositories of :data:`HELD_OUT_REPOS`, chosen by message counts alone (the dev labels cover
  them least), before any of their messages was read. Nothing from them is fitted on or tuned by; the fresh
  held-out sample is drawn here and measured once.
- ``dev``: every other repository (the development labels).

    python -m tools.labeling draw --pool heldout --n 220 --seed 3401 --out /tmp/labels/heldout.keys.jsonl
    python -m tools.labeling draw --pool dev --n 3300 --seed 3402 --batches 6 --out /tmp/labels/dev.keys.jsonl
    python -m tools.labeling show /tmp/labels/dev-1.keys.jsonl --start 0 --count 50
    python -m tools.labeling check LABELS.jsonl --keys /tmp/labels/dev-1.keys.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from swe_taskflow.errors import InputError  # noqa: E402
from swe_taskflow.taxonomy import INTENTS  # noqa: E402
from tools.shared_data import check_default, run_main, shared_data  # noqa: E402

SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")
RESERVED = shared_data("interaction-sessions/reserved_messages.sha256")
LABEL_DIR = ROOT / "tests" / "data"
#: the version of docs/label-conventions.md every new label row names
CONVENTIONS = "conventions-v2.1"
CONFIDENCES = ("high", "medium", "low")
#: repositories whose messages are never fitted on (chosen by counts: few dev labels, enough unlabelled messages)
HELD_OUT_REPOS = frozenset({
    "guthubrx/bigmind", "Hornsyld/economic-bc-connector", "closup/process-xbrl", "Darrenthinker/forwarder-system",
    "OdyAsh/odyash-dev.to", "Borewit/listFix", "AndyCross/pytato", "tr3stanley/autogenerate-site-test-1",
    "AlexandreMaillot/digiharmony", "CS485-Harmony/Harmony", "DakineMI/mcp-gateway", "Sthmpe/Stitchsuit",
    "kevinslin/skillz", "jonathan-nascimento51/glpi_dashboard_cau",
})
#: long sessions only, as the target measures them
MIN_MESSAGES = 3


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def reserved_hashes(path: Path = RESERVED) -> frozenset[str]:
    check_default(path, RESERVED, "--reserved")
    return frozenset(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def labelled_keys(label_dir: Path = LABEL_DIR) -> set[tuple[str, int]]:
    keys: set[tuple[str, int]] = set()
    for path in sorted(label_dir.glob("*labels*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                keys.add((str(row["session_id"]), int(row["index"])))
    return keys


def iter_messages(sessions: Path = SESSIONS) -> Iterator[tuple[str, str, int, int, str]]:
    """(repo, session_id, index, n_messages, text) of every user message, in file order."""
    check_default(sessions, SESSIONS, "--sessions")
    with open(sessions, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            msgs = rec["user_messages"]
            for m in msgs:
                yield rec["repo"], rec["session_id"], int(m["index"]), len(msgs), m["text"]


def corpus_index(sessions: Path = SESSIONS) -> dict[tuple[str, int], tuple[str, int, str]]:
    return {(sid, idx): (repo, n, text) for repo, sid, idx, n, text in iter_messages(sessions)}


def pool(which: str, sessions: Path = SESSIONS, reserved: Path = RESERVED,
         label_dir: Path = LABEL_DIR) -> list[tuple[str, int]]:
    """Keys of the messages a new batch may draw from, sorted; one key per distinct text (its first copy)."""
    banned = reserved_hashes(reserved)
    done = labelled_keys(label_dir)
    index = corpus_index(sessions)
    done_texts = {text_sha256(index[k][2]) for k in done if k in index}
    seen: set[str] = set()
    out = []
    for repo, sid, idx, n, text in sorted(iter_messages(sessions), key=lambda m: (m[1], m[2])):
        if n < MIN_MESSAGES or (repo in HELD_OUT_REPOS) != (which == "heldout") or not text.strip():
            continue
        h = text_sha256(text)
        if h in banned or h in done_texts or h in seen or (sid, idx) in done:
            continue
        seen.add(h)
        out.append((sid, idx))
    return out


def draw(which: str, n: int, seed: int, *, per_repo_cap: int | None = None, **paths) -> list[tuple[str, int]]:
    """``n`` keys drawn with a seeded rng (at most ``per_repo_cap`` from one repository), in draw order."""
    keys = pool(which, **paths)
    index = corpus_index(paths.get("sessions", SESSIONS))
    order = np.random.default_rng(seed).permutation(len(keys))
    out, per_repo = [], {}
    for i in order:
        repo = index[keys[i]][0]
        if per_repo_cap is not None and per_repo.get(repo, 0) >= per_repo_cap:
            continue
        per_repo[repo] = per_repo.get(repo, 0) + 1
        out.append(keys[i])
        if len(out) == n:
            break
    return out


def read_keys(path: Path) -> list[tuple[str, int]]:
    return [(str(r["session_id"]), int(r["index"])) for r in map(json.loads, path.read_text("utf-8").splitlines())]


def write_keys(path: Path, keys: list[tuple[str, int]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"session_id": s, "index": i}) + "\n" for s, i in keys), encoding="utf-8")


def show(keys: list[tuple[str, int]], start: int, count: int, head: int = 1500, tail: int = 500) -> str:
    index = corpus_index()
    parts = []
    for k, key in enumerate(keys[start:start + count], start=start):
        _repo, n, text = index[key]
        text = text.strip()
        shown = text if len(text) <= head + tail + 50 else (
            f"{text[:head]}\n[... {len(text) - head - tail} characters not shown ...]\n{text[-tail:]}")
        parts.append(f"=== #{k}  session_id={key[0]} index={key[1]}  (message {key[1] + 1} of {n}, "
                     f"{len(text)} chars)\n{shown}\n")
    return "\n".join(parts)


def check_labels(path: Path, keys: list[tuple[str, int]] | None = None) -> list[dict]:
    """Every row is ``{session_id, index, intent, confidence, labeler, conventions}`` and no more; with ``keys``,
    the file covers exactly those keys once each."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        fields = {"session_id", "index", "intent", "confidence", "labeler", "conventions"}
        if set(row) != fields:
            raise InputError("a label row has other fields than the six allowed", path=str(path), row=n,
                             expected=sorted(fields), actual=sorted(row))
        if row["intent"] not in INTENTS:
            raise InputError("unknown intent", path=str(path), row=n, field="intent", actual=row["intent"])
        if row["confidence"] not in CONFIDENCES:
            raise InputError("unknown confidence", path=str(path), row=n, field="confidence",
                             expected=list(CONFIDENCES), actual=row["confidence"])
        rows.append(row)
    got = [(str(r["session_id"]), int(r["index"])) for r in rows]
    if len(set(got)) != len(got):
        raise InputError("a message is labelled twice", path=str(path))
    if keys is not None and set(got) != set(keys):
        missing, extra = set(keys) - set(got), set(got) - set(keys)
        raise InputError("the labels do not cover the batch exactly", path=str(path),
                         actual=f"{len(missing)} missing (e.g. {sorted(missing)[:3]}), {len(extra)} not in the batch")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("draw", help="draw a batch of keys (no text) from a pool")
    d.add_argument("--pool", choices=["dev", "heldout"], required=True)
    d.add_argument("--n", type=int, required=True)
    d.add_argument("--seed", type=int, required=True)
    d.add_argument("--per-repo-cap", type=int)
    d.add_argument("--batches", type=int, default=1, help="cut the draw into this many files OUT-1, OUT-2, ...")
    d.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("show", help="print a batch's messages for a reader")
    s.add_argument("keys", type=Path)
    s.add_argument("--start", type=int, default=0)
    s.add_argument("--count", type=int, default=50)
    c = sub.add_parser("check", help="check a label file (and that it covers a batch exactly)")
    c.add_argument("labels", type=Path)
    c.add_argument("--keys", type=Path)
    args = ap.parse_args()
    if args.cmd == "draw":
        keys = draw(args.pool, args.n, args.seed, per_repo_cap=args.per_repo_cap)
        if args.batches == 1:
            write_keys(args.out, keys)
            print(f"{len(keys)} keys -> {args.out}")
        else:
            stem = args.out.name.removesuffix(".keys.jsonl")
            for b, part in enumerate(np.array_split(np.arange(len(keys)), args.batches), start=1):
                out = args.out.with_name(f"{stem}-{b}.keys.jsonl")
                write_keys(out, [keys[i] for i in part])
                print(f"{len(part)} keys -> {out}")
    elif args.cmd == "show":
        print(show(read_keys(args.keys), args.start, args.count))
    else:
        rows = check_labels(args.labels, read_keys(args.keys) if args.keys else None)
        print(f"{args.labels}: {len(rows)} rows ok")


if __name__ == "__main__":
    raise SystemExit(run_main(main, "labeling"))
