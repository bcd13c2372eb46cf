"""Render the dataset card (README.md) from ``hub_card.md`` and a release's manifest.

The YAML header is produced with ``datasets``' own helpers (``MetadataConfigs``,
``DatasetInfosDict.to_dataset_card_data``) so that ``load_dataset`` reads exactly what is declared;
the prose carries the target Task Flow, TFAS with components per condition, how to load each
condition and what is hidden from evaluated agents. Deterministic: no dates, sorted where unordered.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from swe_taskflow.errors import ConfigError
from swe_taskflow.flow import LENGTH_BINS, RETAINED
from swe_taskflow.manifest import Manifest
from swe_taskflow.verify import SESSION_CONFIG, TRAJECTORY_CONFIG, features_for

DEFAULT_TEMPLATE = Path(__file__).resolve().parents[2] / "hub_card.md"
TAGS = ("code", "agents", "software-engineering", "multi-turn", "swe-bench", "swe-taskflow")
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
#: Columns of a session row an evaluated agent must not be shown.
HIDDEN_COLUMNS = {
    "questions[].reference_answer": "the reference answer the judge compares the agent's answer with",
    "questions[].evidence": "paths and symbols that support the reference answer",
    "questions[].proof_script": "the golden proof script run at creation time",
    "questions[].proof_report": "the proof's execution report (exit codes, output and tree hashes)",
    "original_prompt": "the single-message issue (in split conditions it would reveal later turns)",
    "split_status, source_task_sha256, row_sha256": "bookkeeping",
}


def card_yaml(manifest: Manifest, *, license: str) -> str:
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData
    data = DatasetCardData(license=license, tags=list(TAGS), pretty_name=manifest.name,
                           task_categories=["text-generation"], language=["en"])
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
    return data.to_yaml().rstrip("\n")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def target_section(target, manifest: Manifest) -> str:
    fl = target.flow
    lines = [f"Calibrated to **{target.name}**" + (" (provisional stand-in)" if target.provisional else "")
             + f": {target.population}." if target.population else ".",
             "", f"- file: `{manifest.target.path}` (sha256 `{manifest.target.sha256}`)",
             f"- session filter: at least {target.min_messages} user messages"]
    if target.sample_size:
        lines.append("- sample: " + ", ".join(f"{v} {k}" for k, v in sorted(target.sample_size.items())))
    if target.classifier:
        lines.append("- classifier: " + ", ".join(f"{k}={v}" for k, v in sorted(target.classifier.items())))
    if target.description:
        lines += ["", target.description]
    lines += ["", "| length bin | " + " | ".join(LENGTH_BINS) + " |", "|---|" + "---|" * len(LENGTH_BINS),
              "| P_L | " + " | ".join(_pct(x) for x in fl.length) + " |", ""]
    top = sorted(zip(RETAINED, fl.intent), key=lambda kv: (-kv[1], kv[0]))
    lines.append("Task types (P_T): " + ", ".join(f"{k} {_pct(v)}" for k, v in top if v > 0) + ".")
    return "\n".join(lines)


def tfas_table(manifest: Manifest) -> str:
    """TFAS with its components per split, and how each split's candidates were selected (Appendix F asks
    for the configuration beside every aggregate)."""
    rules = (manifest.provenance or {}).get("selection") or {}
    rows = ["| split | condition | question pool | rows | TFAS | S_L | S_T | S_R | candidate selection |",
            "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for s in manifest.configs().get(SESSION_CONFIG, []):
        t = s.tfas or {}
        f = lambda k, p: f"{t[k]:.{p}f}" if k in t else "-"  # noqa: E731
        rows.append(f"| `{s.name}` | {s.condition or '-'} | {s.question_pool or '-'} | {s.rows} | {f('tfas', 2)} | "
                    f"{f('S_L', 3)} | {f('S_T', 3)} | {f('S_R', 3)} | {rules.get(s.name, '-')} |")
    return "\n".join(rows)


def load_section(manifest: Manifest, repo_id: str) -> str:
    cfgs = manifest.configs()
    lines = ["```python", "from datasets import load_dataset", ""]
    for s in cfgs.get(SESSION_CONFIG, []):
        lines.append(f'{s.name} = load_dataset("{repo_id}", split="{s.name}")')
    if TRAJECTORY_CONFIG in cfgs:
        lines += ["", "# agent trajectories, one split per condition, bound to split and row hashes"]
        for s in cfgs[TRAJECTORY_CONFIG]:
            lines.append(f'traj_{s.name} = load_dataset("{repo_id}", "{TRAJECTORY_CONFIG}", split="{s.name}")')
    lines += ["```", "", "Give the agent `turns[*].text` in order; a turn of kind `qa` is a repository question "
              "whose answer is judged against `questions[*].reference_answer`. A local copy loads the same way: "
              "`load_dataset(\"path/to/folder\", split=...)`."]
    return "\n".join(lines)


def hidden_section() -> str:
    lines = ["Pass the evaluated agent only `turns[*].text`, in order, and the environment named by `image_name` "
             "at `base_commit`. Keep these columns away from it:", ""]
    lines += [f"- `{k}`: {v}" for k, v in HIDDEN_COLUMNS.items()]
    return "\n".join(lines)


def files_section(manifest: Manifest) -> str:
    lines = [f"- manifest: `{manifest.path_in_release}` (provenance and every hash)",
             f"- target Task Flow: `{manifest.target.path}`" if manifest.target else "- target: none"]
    lines += [f"- `{f.path}`" for f in manifest.extra_files]
    lines += ["", "| config | split | rows | content sha256 | files |", "|---|---|---:|---|---|"]
    for s in manifest.splits:
        lines.append(f"| {s.config} | `{s.name}` | {s.rows} | `{s.sha256}` | "
                     + ", ".join(f"`{f.path}` (`{f.sha256[:12]}`)" for f in s.files) + " |")
    return "\n".join(lines)


def provenance_section(manifest: Manifest) -> str:
    p, pkg = manifest.provenance, manifest.package
    src = p.get("source") or {}
    lines = ["Built with swe-taskflow " + str(pkg.get("version"))
             + (f" at commit `{pkg.get('git_commit')}`" if pkg.get("git_commit") else "")
             + (" (uncommitted changes)" if pkg.get("git_dirty") else "") + "."]
    if src:
        lines.append(f"Source: `{src.get('benchmark', src.get('id', '?'))}` revision `{src.get('revision', '?')}`.")
    models = p.get("models") or {}
    for role in sorted(models):
        m = models[role]
        desc = ", ".join(f"{k}={v}" for k, v in sorted(m.items())) if isinstance(m, dict) else str(m)
        lines.append(f"- {role}: {desc}")
    if p.get("seeds"):
        lines.append("- seeds: " + ", ".join(f"{k}={v}" for k, v in sorted(p["seeds"].items())))
    if (p.get("recipe") or {}).get("sha256"):
        lines.append(f"- recipe sha256: `{p['recipe']['sha256']}`")
    return "\n".join(lines)


def license_section(license: str) -> str:
    return (f"Released under `{license}`. Task texts derive from SWE-Bench Pro (MIT, Copyright (c) Scale AI, "
            "Inc); model-generated turns, questions and reference answers are marked with their generator in each "
            "question's `generator` field. No user session text is included.")


def render_card(manifest: Manifest, target, *, repo_id: str | None, license: str,
                template: str | Path | None = None) -> bytes:
    """The README bytes for ``manifest`` (its readme entry is ignored: the README is hashed after)."""
    path = Path(template) if template else DEFAULT_TEMPLATE
    if not path.exists():
        raise ConfigError("dataset card template not found", path=str(path))
    repo = repo_id or f"ORG/{manifest.name}"
    values: dict[str, Any] = {
        "yaml": card_yaml(manifest, license=license), "name": manifest.name, "version": manifest.version,
        "repo_id": repo, "target_section": target_section(target, manifest), "tfas_table": tfas_table(manifest),
        "load_section": load_section(manifest, repo), "hidden_section": hidden_section(),
        "files_section": files_section(manifest), "provenance_section": provenance_section(manifest),
        "license_section": license_section(license),
    }

    def sub(m: re.Match) -> str:
        if m.group(1) not in values:
            raise ConfigError("unknown placeholder in the card template", path=str(path), field=m.group(1),
                              expected=sorted(values))
        return str(values[m.group(1)])

    return PLACEHOLDER.sub(sub, path.read_text(encoding="utf-8")).encode("utf-8")


__all__ = ["render_card", "card_yaml", "HIDDEN_COLUMNS", "DEFAULT_TEMPLATE"]
