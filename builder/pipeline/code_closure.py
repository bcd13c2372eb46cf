"""What a stage's code really is: the static import closure of its module, and the package data that closure reads.

A stage's cache key must change whenever code or data that can change its output changes. Lists written by hand
went stale (a stage used the TFAS formula without naming it), so the key is derived from the source itself: every
``import`` and ``from ... import`` anywhere in a module (function bodies included: heavy dependencies are imported
lazily), resolved within the project's packages, plus the parent packages' ``__init__`` modules that Python runs
first, transitively. Package data enters through the two accessors the project uses (``builder_path(...)`` and
``importlib.resources.files(PKG).joinpath(...)``) with literal arguments; ``tests/unit/test_stage_keys.py`` checks
that no product module reaches its data another way.

Over-inclusion only costs a rebuild; a missed dependency silently reuses a stale output, so when in doubt an edge is
kept (``TYPE_CHECKING`` imports included).

Release recipes (``*.toml`` anywhere in the packages, e.g. ``builder/releases/``) are never code data, even where a
module lists their folder (the CLI resolves ``build example`` there): a recipe is a build's *input*, keyed by the
sections each stage reads and the files it points at (``runner.stage_key``). So a recipe saved beside the shipped
ones moves no other build's keys, and editing one recipe moves only the builds of that recipe.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from swe_taskflow.hashing import file_sha256

#: The builder's folder (``builder`` in a checkout, ``swe_taskflow_builder`` in a wheel) and the name it runs under
#: (the same, but ``swe_taskflow_builder`` when an editable install maps that name onto a checkout's ``builder``).
BUILDER_DIR = Path(__file__).resolve().parents[1].name
_RUNTIME = __name__.split(".")[0]
#: The packages whose modules can be in a closure (the third-party code a stage uses is pinned by the install).
PROJECT_PACKAGES = ("swe_taskflow", BUILDER_DIR)
#: Suffix of release recipes: inputs of a build, never code data of its stages (see the module docstring).
RECIPE_SUFFIX = ".toml"


def is_recipe(path: Path) -> bool:
    """Whether a package file is a release recipe (keyed as the build's input, not as a stage's code)."""
    return path.suffix == RECIPE_SUFFIX


def _literal_parts(args: list[ast.expr]) -> list[str] | None:
    """Literal path parts of an accessor call; an f-string contributes the folder before its first field."""
    parts: list[str] = []
    for arg in args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            parts.append(arg.value)
            continue
        if isinstance(arg, ast.JoinedStr):
            head = ""
            for v in arg.values:
                if not (isinstance(v, ast.Constant) and isinstance(v.value, str)):
                    break
                head += v.value
            parts.append(head.rsplit("/", 1)[0] if "/" in head else "")
        return [p for p in parts if p]      # a non-literal part: the folder named so far
    return parts


@dataclass
class _Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module


@dataclass
class CodeBase:
    """The project's modules under ``root`` (the folder holding the ``swe_taskflow`` and ``builder`` packages: a
    checkout, site-packages of a wheel install, or a temporary copy in a test)."""

    root: Path
    packages: tuple[str, ...] = PROJECT_PACKAGES
    _modules: dict[str, _Module | None] = field(default_factory=dict, repr=False)
    _digests: dict[Path, tuple[tuple[int, int, int], str]] = field(default_factory=dict, repr=False)
    _closures: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict, repr=False)
    _data: dict[str, tuple[Path, ...]] = field(default_factory=dict, repr=False)
    _edges: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    @classmethod
    def installed(cls) -> "CodeBase":
        return cls(Path(__file__).resolve().parents[2])

    def _local(self, name: str) -> str:
        """A module's name as its folder spells it (a stage names its module by the name it runs under)."""
        head, dot, rest = name.partition(".")
        return f"{BUILDER_DIR}{dot}{rest}" if head == _RUNTIME != BUILDER_DIR else name

    # -- modules ---------------------------------------------------------------------------------------------
    def _find(self, name: str) -> _Module | None:
        if name in self._modules:
            return self._modules[name]
        found = None
        if name.split(".")[0] in self.packages:
            base = self.root.joinpath(*name.split("."))
            for path, is_pkg in ((base / "__init__.py", True), (base.with_suffix(".py"), False)):
                if path.is_file():
                    found = _Module(name, path, is_pkg, ast.parse(path.read_bytes(), filename=str(path)))
                    break
        self._modules[name] = found
        return found

    def _package_of(self, mod: _Module) -> str:
        return mod.name if mod.is_package else mod.name.rpartition(".")[0]

    def _exports(self, pkg: str) -> dict[str, str]:
        """``name -> submodule`` of a package that loads its public names lazily (``swe_taskflow._EXPORTS``)."""
        mod = self._find(pkg)
        out: dict[str, str] = {}
        if mod is None:
            return out
        for node in mod.tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Dict):
                for k, v in zip(value.keys, value.values):
                    if (isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, str)
                            and self._find(f"{pkg}.{v.value}") is not None):
                        out[str(k.value)] = f"{pkg}.{v.value}"
        return out

    def _imports(self, mod: _Module) -> set[str]:
        """Project modules ``mod`` imports anywhere in its source (walked once per module: every stage's closure
        shares most modules, and walking their trees again was about 3 s of a build's CPU)."""
        if mod.name not in self._edges:
            self._edges[mod.name] = frozenset(self._walk_imports(mod))
        return set(self._edges[mod.name])

    def _walk_imports(self, mod: _Module) -> set[str]:
        out: set[str] = set()
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    out.add(alias.name)
                    if alias.asname is None and "." not in alias.name:
                        out.update(self._exports(alias.name).values())   # ``import pkg``: every lazy name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = self._package_of(mod).split(".")
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                exports = self._exports(target)
                for alias in node.names:   # ``from pkg import sub``: the submodule (its parents join the closure)
                    sub = f"{target}.{alias.name}"
                    if self._find(sub) is not None:
                        out.add(sub)
                    elif alias.name in exports:
                        out.add(exports[alias.name])
                    else:                  # a name the module itself defines
                        out.add(target)
            elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
                  and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                out.add(str(node.args[0].value))
        return {m for m in out if m.split(".")[0] in self.packages and self._find(m) is not None}

    def modules(self) -> list[str]:
        """Every module of the project's packages (package data folders left out), sorted."""
        out = []
        for pkg in self.packages:
            for p in (self.root / pkg).rglob("*.py"):
                rel = p.relative_to(self.root)
                if "__pycache__" in rel.parts or "data" in rel.parts:
                    continue
                parts = list(rel.with_suffix("").parts)
                out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        return sorted(out)

    def imports_of(self, name: str) -> set[str]:
        """The project modules module ``name`` imports (its direct edges in the import graph)."""
        name = self._local(name)
        mod = self._find(name)
        return set() if mod is None else self._imports(mod) - {name}

    def closure(self, *roots: str) -> tuple[str, ...]:
        """Every project module that importing ``roots`` can run, sorted (the sources are parsed once: a
        CodeBase is a snapshot of the code's structure; file contents are re-hashed on every key)."""
        roots = tuple(self._local(r) for r in roots)
        if roots in self._closures:
            return self._closures[roots]
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            mod = self._find(name)
            if mod is None:
                raise ModuleNotFoundError(f"module {name!r} of a pipeline stage is not under {self.root}", name=name)
            seen.add(name)
            parts = name.split(".")
            todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))   # parent packages run first
            todo.extend(self._imports(mod))
        self._closures[roots] = tuple(sorted(seen))
        return self._closures[roots]

    # -- package data ----------------------------------------------------------------------------------------
    def _data_paths(self, name: str) -> tuple[Path, ...]:
        """Package files and folders module ``name`` reads through the project's data accessors (parsed once)."""
        if name in self._data:
            return self._data[name]
        mod = self._find(name)
        out: list[Path] = []
        for node in ast.walk(mod.tree) if mod is not None else ():
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id == "builder_path":
                parts = _literal_parts(node.args)
                if parts:            # no literal part at all: the accessor's own generic body, not a read
                    out.append(self.root.joinpath(BUILDER_DIR, *parts))
            elif (isinstance(func, ast.Attribute) and func.attr == "joinpath" and isinstance(func.value, ast.Call)
                  and getattr(func.value.func, "attr", getattr(func.value.func, "id", "")) == "files"
                  and func.value.args):
                anchor = func.value.args[0]
                if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
                    pkg = anchor.value
                elif isinstance(anchor, ast.Name) and anchor.id in ("__package__", "__name__"):
                    pkg = self._package_of(mod)
                else:
                    continue
                parts = _literal_parts(node.args)
                if parts:
                    out.append(self.root.joinpath(*pkg.split("."), *[p for part in parts for p in part.split("/")]))
        self._data[name] = tuple(out)
        return self._data[name]

    def data_files(self, modules: tuple[str, ...]) -> list[Path]:
        """Every package data file the modules read (folders expanded: a bundled repository's sources too), sorted;
        release recipes left out (:func:`is_recipe`)."""
        files: set[Path] = set()
        for name in modules:
            for p in self._data_paths(name):
                if p.is_dir():
                    files.update(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
                elif p.exists():
                    files.add(p)
        return sorted(f for f in files if not is_recipe(f))

    # -- key material ----------------------------------------------------------------------------------------
    def _rel(self, path: Path) -> str:
        """``path`` relative to the root, the builder's folder spelled ``builder`` whatever the install names it:
        a wheel and a checkout of the same code give the same keys."""
        head, _, rest = path.relative_to(self.root).as_posix().partition("/")
        return f"{'builder' if head == BUILDER_DIR else head}/{rest}" if rest else head

    def _sha(self, path: Path) -> str:
        """A file's sha256, re-read whenever its size, mtime or inode changes (a build keys every stage twice)."""
        st = path.stat()
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        hit = self._digests.get(path)
        if hit is None or hit[0] != stamp:
            hit = (stamp, file_sha256(path))
            self._digests[path] = hit
        return hit[1]

    def material(self, *roots: str) -> dict[str, str]:
        """``{relative path: sha256}`` of every module and data file the roots use: what a stage key hashes."""
        modules = self.closure(*roots)
        entries = {self._rel(self._find(m).path): self._sha(self._find(m).path) for m in modules}  # type: ignore[union-attr]
        entries.update({self._rel(p): self._sha(p) for p in self.data_files(modules)})
        return dict(sorted(entries.items()))


@lru_cache(maxsize=1)
def installed() -> CodeBase:
    """The installed code base, parsed once per process (a build plans every stage, often twice)."""
    return CodeBase.installed()


__all__ = ["CodeBase", "PROJECT_PACKAGES", "BUILDER_DIR", "RECIPE_SUFFIX", "installed", "is_recipe"]
