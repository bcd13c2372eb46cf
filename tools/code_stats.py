"""Size and shape of the product code, for before/after comparisons of a restructuring (issue 23).

    python -m tools.code_stats [ROOT]     # ROOT: a checkout (default: this one)

Product = swe_taskflow/, builder/ and swe_taskflow_harbor/ Python modules (package data such as the example's
own repository left out). Prints lines, modules, modules under 60 lines and the import circles among the
swe_taskflow/builder modules (their strongly connected components, lazy imports included).
"""

from __future__ import annotations

import sys
from pathlib import Path

from builder.pipeline.code_closure import CodeBase


def _circles(cb: CodeBase) -> list[list[str]]:
    graph = {m: cb.imports_of(m) for m in cb.modules()}
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


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    todo, seen = [start], {start}
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def main(argv: list[str] | None = None) -> int:
    root = Path((argv or sys.argv[1:] or ["."])[0]).resolve()
    files = [p for pkg in ("swe_taskflow", "builder", "swe_taskflow_harbor") for p in (root / pkg).rglob("*.py")
             if "__pycache__" not in p.parts and "data" not in p.relative_to(root / pkg).parts]
    sizes = [len(p.read_text(encoding="utf-8").splitlines()) for p in files]
    circles = _circles(CodeBase(root))
    print(f"product lines {sum(sizes)}; modules {len(files)}; under 60 lines {sum(1 for n in sizes if n < 60)}; "
          f"import circles {len(circles)}")
    for c in circles:
        print("  circle:", " <-> ".join(c))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
