#!/usr/bin/env bash
# Install (Debian) and start a Docker daemon with no bridge and no iptables, as INFRA-FACTS.md measured.
# Leaves a daemon that already answers untouched.
set -euo pipefail
if docker version >/dev/null 2>&1; then echo "docker: a daemon already answers"; exit 0; fi
if [ ! -f /etc/docker/daemon.json ]; then
  mkdir -p /etc/docker
  echo '{"bridge":"none","iptables":false,"ip6tables":false,"ip-forward":false,"ip-masq":false}' > /etc/docker/daemon.json
fi
if ! command -v dockerd >/dev/null 2>&1 || ! command -v bwrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io bubblewrap busybox-static git >/dev/null
fi
setsid nohup dockerd >/tmp/dockerd.log 2>&1 < /dev/null &
for _ in $(seq 1 60); do
  if docker version >/dev/null 2>&1; then echo "docker: daemon up"; exit 0; fi
  sleep 0.5
done
echo "docker: daemon did not start; see /tmp/dockerd.log" >&2
tail -20 /tmp/dockerd.log >&2 || true
exit 1
