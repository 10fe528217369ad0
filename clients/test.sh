#!/usr/bin/env bash
# Every LAN client's tests: the TypeScript library (with the protocol vectors and the real lanpushd) and the
# Scripting-app script. Called by scripts/test after the Swift build (it needs .build/debug/lanpushd).
set -euo pipefail
cd "$(dirname "$0")"
./typescript/test.sh
