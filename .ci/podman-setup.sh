#!/usr/bin/env bash
# Installs rootful podman and serves its Docker-compatible API on a unix socket, so that Testcontainers can run
# containers on a Debian 12 machine that has no Docker engine and cannot reach any image registry.
#
# Writes the environment the tests need to $CI_WORK/env.sh (source it). Safe to run again: packages already
# present are not reinstalled and a service already answering on the socket is reused.
#
# Environment: CI_WORK (default /tmp/transfer-engine-ci), PODMAN_SOCKET (default /run/podman/podman.sock).
set -euo pipefail

CI_WORK=${CI_WORK:-/tmp/transfer-engine-ci}
PODMAN_SOCKET=${PODMAN_SOCKET:-/run/podman/podman.sock}
CONF_DIR=$CI_WORK/conf
mkdir -p "$CONF_DIR" "$(dirname "$PODMAN_SOCKET")"

log() { echo "[podman-setup] $*"; }

# runc rather than crun: crun 1.8 refuses hybrid cgroup hierarchies (v1 controllers plus a cgroup2 mount holding
# hugetlb), which is what these sandboxes have. busybox-static is the userland of the base image.
packages=(podman runc conmon netavark aardvark-dns iptables catatonit busybox-static curl ca-certificates)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Root here may lack CAP_SYS_RESOURCE, so a container cannot get rlimits above the caller's hard limits, and podman
# asks for 1048576 by default (setrlimit fails with EPERM). conmon runs with RLIMIT_NPROC 32768, hence 16384.
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=1048576
cat > "$CONF_DIR/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=16384:16384"]

[engine]
runtime = "runc"
CONF

# Nothing can be pulled in CI: block the public registries so that an accidental pull fails at once with a clear
# message instead of hanging on the network.
cat > "$CONF_DIR/registries.conf" <<'CONF'
unqualified-search-registries = []
short-name-mode = "disabled"

[[registry]]
location = "docker.io"
blocked = true

[[registry]]
location = "quay.io"
blocked = true

[[registry]]
location = "ghcr.io"
blocked = true
CONF

cat > "$CI_WORK/env.sh" <<ENV
export CONTAINERS_CONF=$CONF_DIR/containers.conf
export CONTAINERS_REGISTRIES_CONF=$CONF_DIR/registries.conf
export DOCKER_HOST=unix://$PODMAN_SOCKET
# The ryuk reaper image cannot be pulled; containers are removed by Testcontainers' JVM shutdown hook instead.
export TESTCONTAINERS_RYUK_DISABLED=true
# The start-up checks run an alpine container, which cannot be pulled either.
export TESTCONTAINERS_CHECKS_DISABLE=true
# /.dockerenv may exist on these machines; without this Testcontainers would look for mapped ports on the gateway
# of the 'bridge' network instead of on localhost.
export TESTCONTAINERS_HOST_OVERRIDE=localhost
ENV
# shellcheck source=/dev/null
. "$CI_WORK/env.sh"

ping_api() { curl -sf --unix-socket "$PODMAN_SOCKET" http://d/_ping >/dev/null 2>&1; }

if ping_api; then
  log "reusing the podman API already answering on $PODMAN_SOCKET"
else
  rm -f "$PODMAN_SOCKET"
  nohup podman system service --time=0 "unix://$PODMAN_SOCKET" >"$CI_WORK/podman-service.log" 2>&1 &
  echo $! >"$CI_WORK/podman-service.pid"
  for _ in $(seq 1 100); do ping_api && break; sleep 0.2; done
  ping_api || { log "podman API did not come up; its log:"; cat "$CI_WORK/podman-service.log" >&2; exit 1; }
  log "started podman API (pid $(cat "$CI_WORK/podman-service.pid")) on $PODMAN_SOCKET"
fi
log "podman $(podman version --format '{{.Server.Version}}'), env in $CI_WORK/env.sh"
