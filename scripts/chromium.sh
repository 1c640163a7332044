#!/usr/bin/env bash
# chromium.sh — makes sure Debian's chromium is installed for the browser tests, and prints its path.
#
#   bash scripts/chromium.sh         install it with apt-get when missing (as root), print the binary
#
# Idempotent: when the binary is there, nothing is installed. Settings: CHROMIUM_PATH (use this
# binary, install nothing), CHROMIUM_NO_INSTALL=1 (never apt-get; fail when missing).
# stdout carries only the path; logs go to stderr and to /tmp/chromium-apt.log.
set -euo pipefail

log() { printf '[chromium] %s\n' "$*" >&2; }

if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] || { log "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"; exit 1; }
  echo "$CHROMIUM_PATH"
  exit 0
fi

for candidate in /usr/bin/chromium /usr/lib/chromium/chromium; do
  if [ -x "$candidate" ]; then
    echo "$candidate"
    exit 0
  fi
done

if [ "${CHROMIUM_NO_INSTALL:-}" = 1 ]; then
  log "chromium is not installed and CHROMIUM_NO_INSTALL=1; install it with: sudo apt-get install chromium"
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  log "chromium is not installed and installing it needs root: sudo apt-get install --no-install-recommends chromium"
  exit 1
fi

apt=(apt-get -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)
log "installing chromium (apt-get; log in /tmp/chromium-apt.log)"
export DEBIAN_FRONTEND=noninteractive
if ! "${apt[@]}" install -y --no-install-recommends chromium >>/tmp/chromium-apt.log 2>&1; then
  # A fresh machine may have no package lists yet.
  "${apt[@]}" update >>/tmp/chromium-apt.log 2>&1 || { log "apt-get update failed (see /tmp/chromium-apt.log)"; exit 1; }
  "${apt[@]}" install -y --no-install-recommends chromium >>/tmp/chromium-apt.log 2>&1 || {
    log "apt-get install chromium failed (see /tmp/chromium-apt.log)"
    exit 1
  }
fi
[ -x /usr/bin/chromium ] || { log "still no /usr/bin/chromium after apt-get"; exit 1; }
echo /usr/bin/chromium
