#!/usr/bin/env bash
# Install (Debian) what the proof sandboxes need, and start a Docker daemon with no bridge and no
# iptables, as INFRA-FACTS.md measured. Idempotent: installs only what is missing and leaves a
# daemon that already answers untouched.
set -euo pipefail
missing=0
for tool in bwrap busybox git prlimit; do command -v "$tool" >/dev/null 2>&1 || missing=1; done
if ! docker version >/dev/null 2>&1 && ! command -v dockerd >/dev/null 2>&1; then
  missing=1
  if [ ! -f /etc/docker/daemon.json ]; then   # before the install, so the package never starts a bridge
    mkdir -p /etc/docker
    echo '{"bridge":"none","iptables":false,"ip6tables":false,"ip-forward":false,"ip-masq":false}' > /etc/docker/daemon.json
  fi
fi
if [ "$missing" = 1 ]; then
  apt-get update -qq
  pkgs="bubblewrap busybox-static git util-linux"
  command -v dockerd >/dev/null 2>&1 || docker version >/dev/null 2>&1 || pkgs="docker.io $pkgs"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
fi
if docker version >/dev/null 2>&1; then echo "docker: a daemon already answers"; exit 0; fi
setsid nohup dockerd >/tmp/dockerd.log 2>&1 < /dev/null &
for _ in $(seq 1 60); do
  if docker version >/dev/null 2>&1; then echo "docker: daemon up"; exit 0; fi
  sleep 0.5
done
echo "docker: daemon did not start; see /tmp/dockerd.log" >&2
tail -20 /tmp/dockerd.log >&2 || true
exit 1
