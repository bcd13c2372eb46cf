"""Docker for the container tests: one ``docker`` call and one owned, network-less, idle container."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager


def docker(*args, stdin=None, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], input=stdin, capture_output=True, text=True, timeout=300, check=check)


@contextmanager
def idle_container(image: str, prefix: str) -> Iterator[str]:
    """A container of ``image`` with no network running ``sleep infinity``, named ``<prefix>-<random>`` and
    labelled with the project's owner tag (swept after a kill -9); removed on exit. Yields its name."""
    from swe_taskflow.hygiene import OWNER_LABEL, owner_id

    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    docker("run", "-d", "--name", name, "--network", "none", "--label", f"{OWNER_LABEL}={owner_id()}",
           image, "sleep", "infinity")
    try:
        yield name
    finally:
        docker("rm", "-f", name, check=False)
