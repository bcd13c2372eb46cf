"""Render the dataset card (README.md): the prose of ``hub_card.md`` around the facts of :mod:`.card_facts`.

``hub_card.md`` is a Jinja2 template rendered the way huggingface_hub's ``RepoCard.from_template`` renders
one (the YAML header as ``card_data``, ``DatasetCardData``'s keys as variables) but under
``jinja2.StrictUndefined``, which ``from_template`` cannot be given: a name the template uses and the
facts lack is an error, never an empty string. Facts are typed values computed from the rows, the
manifest and the target (:func:`.card_facts.card_facts`), so every number in the prose comes from the data;
``tests/e2e/test_card.py`` recomputes each from the published parquet files with its own code. The YAML
header is produced with ``datasets``' own helpers (``MetadataConfigs``, ``DatasetInfosDict``) so that
``load_dataset`` reads exactly what is declared, and the rendered card must read back unchanged through
``huggingface_hub.DatasetCard``. Deterministic: no dates, sorted where unordered.

A stress-test slice (paper Appendix C, step 7) is never calibrated: the template shows it in its own
section, and a template without one is refused when the release has a slice.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

from swe_taskflow.citations import source_info
from swe_taskflow.errors import ConfigError
from swe_taskflow.manifest import Manifest
from swe_taskflow.release import SESSION_CONFIG, TRAJECTORY_CONFIG
from swe_taskflow.verify_checks import features_for

from .card_facts import SPLIT_REFERENCE, CardFacts, card_facts, size_category

TAGS = ("code", "agents", "software-engineering", "multi-turn", "swe-bench", "swe-taskflow")
#: What a rendered card must not hold: a ``{{ name }}`` left unrendered.
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
#: Written where the Hub repository id belongs until the recipe or ``push --repo`` sets one.
UNSET_REPO = "path/to/this/release"
#: The template variable that holds the stress-test slices (a release with one needs the template to show it).
STRESS_VAR = "stress"


def default_template() -> Path:
    """``hub_card.md``, shipped inside the package (a link to the repository root's file in a checkout)."""
    return Path(str(resources.files(__package__).joinpath("hub_card.md")))


def card_placeholders(text: str) -> list[str]:
    """What in a rendered card still stands in for a value (push refuses a card holding any)."""
    found = [m.group(0) for m in PLACEHOLDER.finditer(text)]
    return found + ([UNSET_REPO] if UNSET_REPO in text else []) + re.findall(r'"ORG/[^"]*"', text)


def card_data(manifest: Manifest, facts: CardFacts):
    """The card's YAML header as ``huggingface_hub.DatasetCardData``, filled by ``datasets``' own helpers."""
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData
    known = [source_info(s) for s, _ in sorted(facts.release.sources)]
    data = DatasetCardData(license=manifest.release.get("license") or "other", tags=list(TAGS),
                           pretty_name=manifest.name, task_categories=["text-generation"], language=["en"],
                           size_categories=[size_category(facts.release.total_rows)],
                           source_datasets=sorted({f"extended|{k['hub_id']}" for k in known if k}) or ["original"])
    configs, infos = {}, {}
    for cfg, splits in manifest.configs().items():
        configs[cfg] = {"data_files": [{"split": s.name, "path": [f.path for f in s.files] if len(s.files) > 1
                                        else s.files[0].path} for s in splits]}
        sd = SplitDict()
        for s in splits:
            sd.add(SplitInfo(name=s.name, num_bytes=s.num_bytes, num_examples=s.rows))
        infos[cfg] = DatasetInfo(features=features_for(cfg), splits=sd, config_name=cfg,
                                 download_size=sum(f.size for s in splits for f in s.files),
                                 dataset_size=sum(s.num_bytes for s in splits))
    MetadataConfigs(configs).to_dataset_card_data(data)
    DatasetInfosDict(infos).to_dataset_card_data(data)
    return data


# ---- how values are written (Jinja2 filters) -------------------------------------------------------------

def _by_count(c: Mapping[Any, int]) -> list[tuple[Any, int]]:
    return sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0])))


def _many(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


FILTERS = {
    "counts": lambda c: ", ".join(f"{k} {v}" for k, v in _by_count(c)),           # k n, the most frequent first
    "counts_paren": lambda c, noun="": ", ".join(f"{k} ({_many(v, noun) if noun else v})" for k, v in _by_count(c)),
    "many": _many,                                                                # 1 row, 2 rows
    "pct": lambda x: f"{100 * x:.1f}%",
    "fixed": lambda x, places: f"{x:.{places}f}",
    "codes": lambda xs: ", ".join(f"`{x}`" for x in xs),
    "cell": lambda v: "-" if v is None or v == "" else str(v),
    "kv": lambda pairs: ", ".join(f"{k} `{v}`" for k, v in pairs),
}


def _environment():
    import jinja2
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
                             lstrip_blocks=True, autoescape=False)
    env.filters.update(FILTERS)
    return env


def render_card(manifest: Manifest, target, splits: Mapping[str, Sequence[Mapping[str, Any]]], *,
                template: str | Path | None = None) -> bytes:
    """The README bytes for ``manifest`` and its session ``splits`` (rows as written, by split name)."""
    import jinja2
    from jinja2 import meta
    from huggingface_hub import DatasetCard

    path = Path(template) if template else default_template()
    if not path.exists():
        raise ConfigError("dataset card template not found", path=str(path))
    facts = card_facts(manifest, target, splits)
    data = card_data(manifest, facts)
    env = _environment()
    text = path.read_text(encoding="utf-8")
    try:
        parsed = env.parse(text)
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError("the card template is not valid Jinja2", path=str(path), field=f"line {e.lineno}",
                          actual=e.message) from None
    if facts.stress is not None and STRESS_VAR not in meta.find_undeclared_variables(parsed):
        raise ConfigError("the release has stress-test slices but the card template never shows `stress`",
                          path=str(path), field=STRESS_VAR, hint="they must be shown apart in the card")
    values = {**data.to_dict(), "card_data": data.to_yaml().rstrip("\n"), "name": manifest.name,
              "version": manifest.version, "f": facts, STRESS_VAR: facts.stress, "session_config": SESSION_CONFIG,
              "trajectory_config": TRAJECTORY_CONFIG, "split_reference": SPLIT_REFERENCE, "unset_repo": UNSET_REPO}
    try:
        content = env.from_string(text).render(values)
    except jinja2.UndefinedError as e:
        raise ConfigError("the card template names a value the facts do not have", path=str(path),
                          actual=e.message, expected=sorted(values)) from None
    if str(DatasetCard(content)) != content:   # what the Hub parses is what was written
        raise ConfigError("the rendered card's YAML header does not read back unchanged through "
                          "huggingface_hub.DatasetCard", path=str(path), field="card_data")
    return content.encode("utf-8")


__all__ = ["render_card", "card_data", "card_placeholders", "default_template", "UNSET_REPO"]
