"""The project's import graph has no circles (issue 23): a module never imports, directly or through others, a
module that imports it. Lazy imports inside functions count: they run all the same."""

from __future__ import annotations

from builder.pipeline.code_closure import installed


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components with more than one module, or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_planted_circle():
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    cb = installed()
    modules = cb.modules()
    assert len(modules) > 150
    graph = {m: cb.imports_of(m) for m in modules}
    assert sum(map(len, graph.values())) > 300          # the graph was really read
    assert _strongly_connected(graph) == []


def test_the_pure_core_never_imports_the_builder():
    cb = installed()
    bad = {m: sorted(d for d in cb.imports_of(m) if d.startswith("builder"))
           for m in cb.modules() if m.startswith("swe_taskflow")}
    assert not {m: d for m, d in bad.items() if d}


def test_building_never_imports_evaluating():
    """No pipeline stage runs `builder.evaluation` (export, import, scoring): what building needs of a source task's
    files (run-script hashes, gold-patch parts) lives below both, in `builder.task_files` (issue 33)."""
    from builder.pipeline.stages import STAGE_NAMES

    cb = installed()
    bad = {s: [m for m in cb.closure(f"builder.pipeline.stages.{s}") if m.startswith("builder.evaluation")]
           for s in STAGE_NAMES}
    assert not {s: mods for s, mods in bad.items() if mods}
