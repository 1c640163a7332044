#!/usr/bin/env bash
# prometheus.sh — makes sure Debian's prometheus server is installed for the metrics test, and
# prints its path.
#
#   bash scripts/prometheus.sh       install it with apt-get when missing (as root), print the binary
#
# Idempotent: when the binary is there, nothing is installed. Settings: PROMETHEUS_PATH (use this
# binary, install nothing), PROMETHEUS_NO_INSTALL=1 (never apt-get; fail when missing).
# stdout carries only the path; logs go to stderr and to /tmp/prometheus-apt.log.
# The package's own service is not needed: the test starts the binary with a config of its own.
set -euo pipefail

log() { printf '[prometheus] %s\n' "$*" >&2; }

if [ -n "${PROMETHEUS_PATH:-}" ]; then
  [ -x "$PROMETHEUS_PATH" ] || { log "PROMETHEUS_PATH=$PROMETHEUS_PATH is not an executable"; exit 1; }
  echo "$PROMETHEUS_PATH"
  exit 0
fi

if [ -x /usr/bin/prometheus ]; then
  echo /usr/bin/prometheus
  exit 0
fi

if [ "${PROMETHEUS_NO_INSTALL:-}" = 1 ]; then
  log "prometheus is not installed and PROMETHEUS_NO_INSTALL=1; install it with: sudo apt-get install prometheus"
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  log "prometheus is not installed and installing it needs root: sudo apt-get install --no-install-recommends prometheus"
  exit 1
fi

apt=(apt-get -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)
log "installing prometheus (apt-get; log in /tmp/prometheus-apt.log)"
export DEBIAN_FRONTEND=noninteractive
if ! "${apt[@]}" install -y --no-install-recommends prometheus >>/tmp/prometheus-apt.log 2>&1; then
  # A fresh machine may have no package lists yet.
  "${apt[@]}" update >>/tmp/prometheus-apt.log 2>&1 || { log "apt-get update failed (see /tmp/prometheus-apt.log)"; exit 1; }
  "${apt[@]}" install -y --no-install-recommends prometheus >>/tmp/prometheus-apt.log 2>&1 || {
    log "apt-get install prometheus failed (see /tmp/prometheus-apt.log)"
    exit 1
  }
fi
[ -x /usr/bin/prometheus ] || { log "still no /usr/bin/prometheus after apt-get"; exit 1; }
echo /usr/bin/prometheus
