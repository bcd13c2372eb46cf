"""``croissant.json``: a release described in the MLCommons Croissant 1.0 format (with RAI fields).

A pure function of the manifest (and the target's name and status), so ``verify`` regenerates the
file and compares it byte for byte. One ``FileObject`` per parquet shard (with its sha256, path
relative to the release root, so the same file is right in a local folder and on the Hub), one
``RecordSet`` per split of every config with a field per column (nested lists and structs as
repeated fields with sub-fields), and the provenance an auditor needs: source benchmark, recipe
hash, classifier, splitter, proofs, target and seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .citations import paper, paper_section, source_info
from . import untrusted
from .errors import InputError, VerifyError
from .manifest import Manifest, serialize
from .release import regular_file
from .turns.stress import is_stress_split

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
CROISSANT_PATH = "croissant.json"
CONTEXT = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/", "equivalentProperty": "cr:equivalentProperty", "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet", "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path",
    "recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated",
    "replace": "cr:replace", "samplingRate": "cr:samplingRate", "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source",
    "subField": "cr:subField", "transform": "cr:transform",
}
_TYPES = {"string": "sc:Text", "int64": "sc:Integer", "int32": "sc:Integer", "float64": "sc:Float",
          "bool": "sc:Boolean"}
HUB = "https://huggingface.co/datasets/"


def _source(file_ref: Mapping[str, Any], column: str, json_path: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {**file_ref, "extract": {"column": column}}
    if json_path:
        out["transform"] = {"jsonPath": json_path}
    return out


def _field(fid: str, name: str, feature: Any, file_ref: Mapping[str, Any], column: str,
           json_path: str | None = None) -> dict[str, Any]:
    """A Croissant field for a ``datasets`` feature (Value, List, struct dict), recursively."""
    from datasets import List, Value
    out: dict[str, Any] = {"@type": "cr:Field", "@id": fid, "name": name}
    if isinstance(feature, List):
        out["repeated"] = True
        feature = feature.feature
    if isinstance(feature, Value):
        out["dataType"] = _TYPES[feature.dtype]
        out["source"] = _source(file_ref, column, json_path)
        return out
    if isinstance(feature, List):   # a list of lists: not in the release schema
        raise ValueError(f"nested lists are not described: {fid}")
    out["dataType"] = "cr:RecordSet"
    out["source"] = _source(file_ref, column, json_path)
    out["subField"] = [_field(f"{fid}/{k}", k, f, file_ref, column, f"{json_path}.{k}" if json_path else k)
                       for k, f in feature.items()]
    return out


def _models_text(manifest: Manifest) -> list[str]:
    models = manifest.provenance.get("models") or {}
    out = []
    for role in ("classifier", "splitter"):
        m = models.get(role) or {}
        if m:
            keys = ("name", "model", "revision", "version", "prompt_sha256")
            out.append(f"{role}: " + ", ".join(f"{k}={m[k]}" for k in keys if m.get(k) not in (None, "")))
    return out


def croissant_doc(manifest: Manifest, *, target_name: str | None = None,
                  target_provisional: bool | None = None) -> dict[str, Any]:
    """The Croissant document of a release (``manifest.croissant`` and ``readme`` are not used)."""
    distribution, record_sets = _distribution_and_record_sets(manifest)
    src = manifest.provenance.get("source") or {}
    sources = sorted({src.get("source") or ""} - {""})
    based_on = [HUB + info["hub_id"] for info in (source_info(x) for x in sources) if info]
    doc: dict[str, Any] = {
        "@context": CONTEXT, "@type": "sc:Dataset", "conformsTo": CONFORMS_TO, "name": manifest.name,
        "description": manifest.release.get("description") or f"{manifest.name} {manifest.version}",
        "version": manifest.version, "license": manifest.release.get("license") or "other",
        "citeAs": paper()["bibtex"], "isBasedOn": based_on,
        "rai:dataCollection": " ".join(_data_collection(manifest, target_name, target_provisional)),
        "rai:dataCollectionType": ["Derived from an existing benchmark", "Machine-generated (turn splitting, "
                                   "intent labels)"],
        "rai:machineAnnotationTools": _models_text(manifest),
        "rai:personalSensitiveInformation": "None: rows hold benchmark task texts and repository questions; the "
                                            "target Task Flow file holds aggregate vectors only, no session text.",
        "rai:dataUseCases": "Evaluating coding agents on multi-turn sessions; the hidden fields (see the dataset "
                            "card and swe_taskflow.visibility) must not reach the evaluated agent.",
        "distribution": distribution, "recordSet": record_sets,
    }
    if manifest.repo_id:
        doc["url"] = HUB + manifest.repo_id
    return doc


def _distribution_and_record_sets(manifest: Manifest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The parquet files (a FileSet where a split has several) and one RecordSet per split."""
    from .verify_checks import features_for

    distribution, record_sets = [], []
    for s in manifest.splits:
        refs = []
        for f in s.files:
            distribution.append({"@type": "cr:FileObject", "@id": f.path, "name": f.path, "contentUrl": f.path,
                                 "encodingFormat": "application/x-parquet", "sha256": f.sha256,
                                 "contentSize": f"{f.size} B"})
            refs.append(f.path)
        file_ref: dict[str, Any] = {"fileObject": {"@id": refs[0]}}
        if len(refs) > 1:
            set_id = f"{s.config}/{s.name}-files"
            distribution.append({"@type": "cr:FileSet", "@id": set_id, "name": set_id,
                                 "encodingFormat": "application/x-parquet",
                                 "includes": refs[0].rsplit("-", 3)[0] + "-*.parquet"})
            file_ref = {"fileSet": {"@id": set_id}}
        rs_id = f"{s.config}_{s.name}"
        feats = features_for(s.config)
        apart = (f"stress-test slice ({paper_section('stress_slices')['where']} of the paper), not calibrated: no "
                 "TFAS, reported apart from the calibrated splits; ") if is_stress_split(s.name) else ""
        record_sets.append({
            "@type": "cr:RecordSet", "@id": rs_id, "name": rs_id,
            "description": f"config `{s.config}`, split `{s.name}`: {apart}{s.rows} rows, content sha256 {s.sha256}",
            "field": [_field(f"{rs_id}/{k}", k, f, file_ref, k) for k, f in feats.items()]})
    return distribution, record_sets


def _data_collection(manifest: Manifest, target_name: str | None, target_provisional: bool | None) -> list[str]:
    """The sentences of ``rai:dataCollection``: source, recipe, seeds, proof sandbox and target."""
    prov = manifest.provenance
    src = prov.get("source") or {}
    recipe = prov.get("recipe") or {}
    proofs = (prov.get("models") or {}).get("proofs") or {}
    collection = [f"Tasks read from `{src.get('source')}` revision `{src.get('revision')}`"
                  + (f" ({src.get('spec')})" if src.get("spec") else "") + "."] if src else []
    if recipe.get("sha256"):
        collection.append(f"Built from recipe `{recipe.get('file', '')}` sha256 {recipe['sha256']}.")
    if prov.get("seeds"):
        collection.append("Seeds: " + ", ".join(f"{k}={v}" for k, v in sorted(prov["seeds"].items())) + ".")
    if proofs:
        collection.append("Proof scripts ran in " + ", ".join(f"{k}={proofs[k]}" for k in
                                                              ("sandbox", "image", "repos") if proofs.get(k)) + ".")
    stress = [s for s in manifest.splits if s.config == "default" and is_stress_split(s.name)]
    if stress:
        collection.append(_stress_sentence(manifest, stress))
    if manifest.target is not None:
        collection.append(f"Calibrated to the target Task Flow `{target_name or manifest.target.path}` "
                          f"({manifest.target.path}, sha256 {manifest.target.sha256})"
                          + (", a provisional stand-in for a production target" if target_provisional else "")
                          + ".")
    return collection


def _stress_sentence(manifest: Manifest, stress: list) -> str:
    """``rai:dataCollection``'s account of the stress-test slices (from the manifest's ``stress`` record)."""
    rec = (manifest.provenance or {}).get("stress")
    slices = {s.get("split"): s for s in (rec.get("slices") or ()) if isinstance(s, Mapping)} \
        if isinstance(rec, Mapping) else {}
    parts = []
    for s in stress:
        r = slices.get(s.name) or {}
        how = ", ".join(x for x in (f"kind {r['kind']}" if r.get("kind") else "",
                                    f"seed {r['seed']}" if r.get("seed") is not None else "") if x)
        parts.append(f"{s.name} ({s.rows} rows" + (f"; {how}" if how else "") + ")")
    return (f"Stress-test slices built apart from the calibrated splits before selection, never calibrated "
            f"({paper_section('stress_slices')['where']} of the paper): " + ", ".join(parts) + "."
            + (f" Rows chosen: {rec['rule']}." if isinstance(rec, Mapping) and rec.get("rule") else ""))


def croissant_bytes(manifest: Manifest, **target: Any) -> bytes:
    """The one byte form of ``croissant.json``: the manifest's (sorted keys, indent 2, final newline)."""
    return serialize(croissant_doc(manifest, **target))


def check_croissant(root: Path, manifest: Manifest, target) -> list[VerifyError]:
    """``croissant.json`` must equal the one regenerated from the manifest (and the target's name)."""
    if manifest.croissant is None:
        return [VerifyError("the manifest lists no croissant.json", kind="missing", path=manifest.path_in_release,
                            field="croissant")]
    path = root / manifest.croissant.path
    if not regular_file(root, manifest.croissant.path):
        return []   # missing, a link or a FIFO: reported by the file inventory, never opened
    want = croissant_bytes(manifest, target_name=None if target is None else target.name,
                           target_provisional=None if target is None else target.provisional)
    try:
        got = untrusted.read_bytes(path, "croissant file", root=root)
    except InputError as exc:
        return [VerifyError(exc.message, kind="mismatch", path=manifest.croissant.path)]
    if got != want:
        at = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
        return [VerifyError(f"croissant.json differs from the one regenerated from the manifest at byte {at}",
                            kind="mismatch", path=manifest.croissant.path, expected=len(want), actual=len(got))]
    return []


__all__ = ["check_croissant", "croissant_doc", "croissant_bytes", "CROISSANT_PATH", "CONFORMS_TO"]
