"""Size and shape of the product code, for before/after comparisons of a restructuring (issue 23).

    python -m tools.code_stats [ROOT]                 # ROOT: a checkout (default: this one)
    python -m tools.code_stats --commits REV..REV     # product lines each first-parent commit adds or removes

Product = swe_taskflow/, builder/ and swe_taskflow_harbor/ Python modules (package data such as the example's
own repository left out). Prints lines, modules, modules under 60 lines, the imports between the
swe_taskflow/builder modules (lazy imports included), their import circles (strongly connected components), and
the core's imports running back up: from a module of a core folder (``swe_taskflow/turns/``) to a module outside
it that imports the folder back (a circle between the core's folders, each folder one room).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from builder.pipeline.code_closure import CodeBase


def _circles(cb: CodeBase) -> list[list[str]]:
    return circles({m: set(cb.imports_of(m)) for m in cb.modules()})


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph`` (node -> what it imports; a node importing itself is no circle): each one's
    nodes, sorted."""
    seen: set[str] = set()
    out = []
    for m in sorted(graph):          # reachability both ways: small graph, plain search is enough
        if m in seen:
            continue
        fwd = _reach(graph, m)
        comp = sorted(n for n in fwd if m in _reach(graph, n))
        seen.update(comp)
        if len(comp) > 1:
            out.append(comp)
    return out


def room(module: str) -> str:
    """A module's node when each folder of the core is one room (``swe_taskflow.turns.x`` -> its folder)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "swe_taskflow" and len(parts) > 2 else module


def back_up_imports(cb: CodeBase) -> list[tuple[str, str]]:
    """``(importer, imported)`` for each import from a core folder's module to a module outside that folder whose
    room imports the folder back (the two rooms share a circle)."""
    edges = [(m, d) for m in cb.modules() if m.startswith("swe_taskflow") for d in cb.imports_of(m)
             if d.startswith("swe_taskflow") and room(d) != room(m)]
    graph: dict[str, set[str]] = {}
    for m, d in edges:
        graph.setdefault(room(m), set()).add(room(d))
    together = {r: i for i, c in enumerate(circles(graph)) for r in c}
    return sorted((m, d) for m, d in edges if room(m) != m and room(m) in together
                  and together.get(room(m)) == together.get(room(d)))


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    todo, seen = [start], {start}
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


PRODUCT_PATHS = ("swe_taskflow/*.py", "builder/*.py", "swe_taskflow_harbor/*.py", ":(exclude)*/data/*")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def commit_deltas(revs: str) -> list[tuple[str, int, str]]:
    """(commit, product lines added minus removed against its first parent, subject) for each first-parent commit
    of ``revs``: a merge counts as the whole branch it brings in, so features and clean-ups can be told apart."""
    out = []
    for line in _git("log", "--first-parent", "--reverse", "--format=%h %s", revs).splitlines():
        commit, _, subject = line.partition(" ")
        stat = _git("diff", "--numstat", f"{commit}^1", commit, "--", *PRODUCT_PATHS)
        delta = sum(int(a) - int(r) for a, r, _ in (ln.split("\t", 2) for ln in stat.splitlines()) if a != "-")
        out.append((commit, delta, subject))
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["--commits"] and len(args) == 2:
        rows = commit_deltas(args[1])
        for commit, delta, subject in rows:
            print(f"{delta:+6d}  {commit}  {subject[:100]}")
        print(f"{sum(d for _, d, _ in rows):+6d}  in all ({len(rows)} commits)")
        return 0
    root = Path((args or ["."])[0]).resolve()
    files = [p for pkg in ("swe_taskflow", "builder", "swe_taskflow_harbor") for p in (root / pkg).rglob("*.py")
             if "__pycache__" not in p.parts and "data" not in p.relative_to(root / pkg).parts]
    sizes = [len(p.read_text(encoding="utf-8").splitlines()) for p in files]
    cb = CodeBase(root)
    found = _circles(cb)
    up = back_up_imports(cb)
    imports = sum(len(cb.imports_of(m)) for m in cb.modules())
    print(f"product lines {sum(sizes)}; modules {len(files)}; under 60 lines {sum(1 for n in sizes if n < 60)}; "
          f"imports {imports}; import circles {len(found)}; core imports running back up {len(up)}")
    for c in found:
        print("  circle:", " <-> ".join(c))
    for m, d in up:
        print(f"  back up: {m} -> {d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
