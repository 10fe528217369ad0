#!/usr/bin/env bash
# The TypeScript clients' checks: strict type-check of the library, the Scripting script and the tests, then
# every test under node's runner (unit tests, protocol vectors, and tests against the real lanpushd).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
tsc -p tsconfig.json
tsc -p tsconfig.test.json
out="$here/.build-test"
rm -rf "$out"
# Transpile only (tsc did the checking): esbuild keeps the file layout and the relative `.js` imports.
esbuild $(find src test -name '*.ts' ! -name '*.d.ts') --outdir="$out" --outbase=. --format=esm --platform=node \
  --target=node20 --log-level=warning
echo '{"type":"module"}' > "$out/package.json"
export LANPUSHD="${LANPUSHD:-$root/.build/debug/lanpushd}"
node --experimental-websocket --no-warnings --test --test-concurrency=1 $(find "$out/test" -name '*.test.js' | sort) "$@"
