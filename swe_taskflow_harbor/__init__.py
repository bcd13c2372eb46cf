"""swe-taskflow's Harbor plugins, importable only where Harbor is installed (its Python 3.12 venv).

- ``swe_taskflow_harbor.environment:ComposeEnvironment``: local containers through Debian's docker-compose
  1.29, offline (no registry probe), every container on network none (``-e`` of ``harbor run``);
- ``swe_taskflow_harbor.agent:MiniSweAgent``: a host-side agent driving mini-swe-agent through a whole
  multi-step task in one conversation (``-a`` with ``--resume-trajectory``).

Nothing in ``swe_taskflow`` or ``builder`` imports this package.
"""
