#!/usr/bin/env bash
# The demo job on embedded defaults: installs the pinned Temporal CLI if needed, starts the dev server,
# runs a worker in process and one agent run with the offline (scripted) model.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
bash scripts/install-temporal.sh >/dev/null
exec node bin/durable-agent.js demo
