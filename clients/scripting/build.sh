#!/usr/bin/env bash
# Bundles the script for the Scripting app: dist/index.tsx (the script and the lanpush client, self-contained)
# and dist/live_activity.tsx (the Live Activity UI, which the app runs on its own). `--check` rebuilds into a
# temporary folder and fails when the committed bundle differs from the sources.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/dist"
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
# Relative paths from here, so the bundle's path comments are the same wherever it is built from.
cd "$here"
common=(--bundle --format=esm --target=es2020 --charset=utf8 --jsx-factory=createElement --jsx-fragment=Fragment
  --external:scripting --legal-comments=none --log-level=warning)
# The Live Activity UI: its own entry point, imports only "scripting".
esbuild src/live_activity.tsx "${common[@]}" --outfile="$out/live_activity.tsx"
# The script: "./live_activity" stays an import, so the registration happens once, in the app's own file.
esbuild src/index.tsx "${common[@]}" --external:./live_activity --outfile="$out/index.tsx"
if [ $check = 1 ]; then
  for f in index.tsx live_activity.tsx; do
    if ! cmp -s "$out/$f" "$here/dist/$f"; then
      echo "clients/scripting/dist/$f is out of date: run clients/scripting/build.sh and commit the result" >&2
      diff -u "$here/dist/$f" "$out/$f" | head -40 >&2 || true
      exit 1
    fi
  done
  echo "scripting bundle: up to date"
fi
