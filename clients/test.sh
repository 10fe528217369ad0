#!/usr/bin/env bash
# Every LAN client's checks: strict type-checks (the TypeScript library and its tests; the Scripting script
# against scripting.d.ts, and its tests against the fake app; the live preview and wall view pages), the check that
# the pages' committed bundles match their sources, then every test under node's runner — unit tests, the shared
# protocol vectors, the tests against the real lanpushd, and the committed Scripting bundle.
# scripts/test runs it after the Swift build; `LANPUSHD=/path/to/lanpushd` picks another daemon.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"
export LANPUSHD="${LANPUSHD:-$root/.build/debug/lanpushd}"
if [ ! -x "$LANPUSHD" ]; then
  (cd "$root" && swift build --product lanpushd)
fi
tsc -p typescript/tsconfig.json
tsc -p typescript/tsconfig.test.json
tsc -p scripting/tsconfig.json
tsc -p scripting/tsconfig.test.json
tsc -p preview/tsconfig.json
tsc -p preview/tsconfig.test.json
# lanpushd embeds preview.js and wall.js as committed: they must be what clients/preview/src builds to.
preview/build.sh --check
out="$here/.build-test"
rm -rf "$out"
# Transpile only (tsc did the checking): esbuild keeps the layout and the relative `.js` imports.
esbuild $(find typescript/src typescript/test scripting/test preview/src/wall/pairing.ts preview/src/common/api.ts preview/test -name '*.ts' ! -name '*.d.ts') --outdir="$out" --outbase=. \
  --format=esm --platform=node --target=node20 --log-level=warning
echo '{"type":"module"}' > "$out/package.json"
flags=(--no-warnings --import "$out/typescript/test/support/setup.js")
# Node 20 needs the flag for its WebSocket; a Node without it gets Debian's node-ws (support/setup.ts).
node --experimental-websocket -e 0 2>/dev/null && flags+=(--experimental-websocket)
node "${flags[@]}" --test --test-concurrency=1 $(find "$out" -name '*.test.js' | sort) "$@"
