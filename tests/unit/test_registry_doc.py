"""The registry's docstring names the stages in build order, as the registry builds them (issue 33: it had lost
``augment`` and ``stress``)."""

from __future__ import annotations

import re

from builder.pipeline import registry
from builder.pipeline.stages import STAGE_NAMES


def test_the_docstring_lists_every_stage_in_build_order():
    text = " ".join(registry.__doc__.split())
    listed = re.search(r"(\w+(?: -> \w+)+)", text).group(1).split(" -> ")
    assert listed == list(STAGE_NAMES) == [s.name for s in registry.pipeline_stages()]
