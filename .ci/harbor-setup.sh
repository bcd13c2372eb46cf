#!/usr/bin/env bash
# What the harbor-marked tests need: Harbor's own Python 3.12 virtual environment with harbor==0.25.0,
# mini-swe-agent, the Docker SDK and the project's Harbor plugins (make harbor-venv). The plugin
# swe_taskflow_harbor.environment:DockerEnvironment talks to the Docker daemon .ci/start-docker.sh started
# through its API (task images built there are used as they are; no compose front end is needed) and
# never creates a network: every container runs with network_mode none (the e2e test checks docker network ls).
set -euo pipefail
cd "$(dirname "$0")/.."
make harbor-venv
LITELLM_LOCAL_MODEL_COST_MAP=True HARBOR_TELEMETRY=0 .harbor-venv/bin/harbor --version
