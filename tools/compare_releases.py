"""Are two builds of a release the same content? For before/after checks of a change that must not move a
release (issue 23): every manifest field and every file equal, except what names the commit that built it.

    python -m tools.compare_releases OLD/release NEW/release      # exit 0: the same content; 1: names what differs

Left out of the comparison: ``package.git_commit``/``git_dirty``, and what follows from them (the card's commit
line, so the card's hash, and ``manifest_sha256``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from swe_taskflow.release import manifest_files

#: The card's commit and its "(uncommitted changes)" mark, after the closing backtick the card puts between them.
_COMMIT = re.compile(r"[0-9a-f]{40}(`?)( \(uncommitted changes\))?")


def _manifest(release: Path) -> dict:
    (path,) = manifest_files(release)
    m = json.loads(path.read_text(encoding="utf-8"))
    for key in ("git_commit", "git_dirty"):
        m.get("package", {}).pop(key, None)
    m.pop("manifest_sha256", None)
    m.pop("readme", None)
    return m


def differences(old: Path, new: Path) -> list[str]:
    """What differs between the two releases (empty: the same content)."""
    a, b = _manifest(old), _manifest(new)
    out = [f"manifest: {k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    card_a, card_b = (_COMMIT.sub(r"<commit>\1", (r / "README.md").read_text(encoding="utf-8")) for r in (old, new))
    if card_a != card_b:
        out.append("README.md (beyond its commit line)")
    files = {p.relative_to(r) for r in (old, new) for p in r.rglob("*") if p.is_file()}
    for rel in sorted(files):
        if rel.name == "README.md" and len(rel.parts) == 1 or rel.parts[0] == "manifests":
            continue
        pa, pb = old / rel, new / rel
        if not (pa.is_file() and pb.is_file() and pa.read_bytes() == pb.read_bytes()):
            out.append(str(rel))
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    diff = differences(Path(args[0]), Path(args[1]))
    print("the same content (all but the commit)" if not diff else "different: " + ", ".join(diff))
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
