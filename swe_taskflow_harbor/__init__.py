"""swe-taskflow's Harbor plugins, importable only where Harbor is installed (its Python 3.12 venv).

- ``swe_taskflow_harbor.environment:DockerEnvironment``: one local container per trial through the Docker
  API (the ``docker`` SDK), offline (no registry, no compose), on network none, labelled with the project's
  owner format so its sweep removes what a killed run left (``-e`` of ``harbor run``); its commands and
  transfers go through a resident helper in the container (``container_helper``, run there by
  ``python3``; ``command_channel`` on the host side);
- ``swe_taskflow_harbor.agent:MiniSweAgent``: a host-side agent driving mini-swe-agent through a whole
  multi-step task in one conversation (``-a`` with ``--resume-trajectory``).

Nothing in ``swe_taskflow`` or ``builder`` imports this package.
"""
