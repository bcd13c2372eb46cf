"""swe_taskflow.hygiene keeps every name it exports: the Docker proof runner and Harbor's DockerEnvironment label their
containers with ``hygiene.labels`` (moving the owner helpers to swe_taskflow.owned dropped it, and every Docker
proof and Harbor trial then ended in AttributeError)."""

from __future__ import annotations

import swe_taskflow.hygiene as hygiene


def test_every_exported_name_exists():
    assert [n for n in hygiene.__all__ if not hasattr(hygiene, n)] == []


def test_labels_name_the_owner_and_keep_the_extra_ones():
    got = hygiene.labels(**{"swe-taskflow.proof": "1"})
    assert got == {hygiene.OWNER_LABEL: hygiene.owner_id(), "swe-taskflow.proof": "1"}
