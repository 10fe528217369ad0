#!/usr/bin/env bash
# Instructions per round of the server's hot paths, counted by callgrind (repeatable, unlike wall-clock time):
# a release build of lanpushd (store off, mDNS off) runs under valgrind while Benchmarks/callgrind_driver.py
# drives a fixed workload (ingest -> frame rounds, fan-out rounds) and reads callgrind's counters around it.
#
#   Benchmarks/callgrind.sh                 # build release, run, print instructions per round
#   Benchmarks/callgrind.sh --rounds 500    # any driver option (--fanout-rounds N, --notify-rounds N, --store, --keep)
#   LANPUSHD=path/to/lanpushd Benchmarks/callgrind.sh   # an existing binary, no build
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
binary="${LANPUSHD:-}"
if [ -z "$binary" ]; then
  . scripts/release-flags.sh
  swift build -c release --product lanpushd "${release_compile_flags[@]}" >&2
  binary="$(swift build -c release --show-bin-path)/lanpushd"
fi
# valgrind 3.19 cannot read the DWARF 5 that Swift 6 emits: run a copy without debug info (same instructions).
stripped="$(mktemp /tmp/lanpushd-callgrind.XXXXXX)"
trap 'rm -f "$stripped"' EXIT
objcopy --strip-debug "$binary" "$stripped"
echo "lanpushd: $binary ($(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ', modified'))"
python3 Benchmarks/callgrind_driver.py --lanpushd "$stripped" "$@"
