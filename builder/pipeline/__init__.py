"""The build pipeline: recipe -> cached, resumable stages -> a verified release and its report.

``load_recipe`` reads a release recipe; ``build`` runs it (see :mod:`builder.pipeline.build`);
``run_stages`` / ``plan`` are the generic runner any list of :class:`Stage` can use.
"""

from __future__ import annotations

from .recipe import Recipe, load_recipe, parse_recipe
from .runner import Stage, StageContext, StageResult, plan, run_stages

__all__ = ["Recipe", "load_recipe", "parse_recipe", "Stage", "StageContext", "StageResult", "plan", "run_stages"]
