#!/usr/bin/env bash
# What the harbor-marked tests need: Debian's docker-compose 1.29 (the compose front end of
# swe_taskflow_harbor.environment:ComposeEnvironment; it talks to the Docker daemon .ci/start-docker.sh
# started, so task images built there are used as they are) and Harbor's own Python 3.12 virtual
# environment with harbor==0.25.0, mini-swe-agent and the project's Harbor plugins (make harbor-venv).
# Never creates a network: compose creates none for services with network_mode set, and every
# container of ComposeEnvironment runs with network_mode none (the e2e test checks docker network ls).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v docker-compose >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi
docker-compose version --short
make harbor-venv
LITELLM_LOCAL_MODEL_COST_MAP=True HARBOR_TELEMETRY=0 .harbor-venv/bin/harbor --version
