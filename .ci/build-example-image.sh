#!/usr/bin/env bash
# Build the example task's image locally (no registry): swe-taskflow/ticketdesk:<sha12>, from the host's
# python3 + busybox + git + bash and the task's repository at its base_commit. Needs a Docker daemon
# (.ci/start-docker.sh) and the project's venv (make setup). Reused when its content is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/swe-taskflow example build-image
