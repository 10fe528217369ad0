#!/usr/bin/env bash
# Soak (docs/RELIABILITY.md): lanpushd (release, durable store) with 10,000 device sessions for 10 minutes at 1,000
# updates/s, 1 % of the sessions reconnecting every second; per minute the server's RSS (median and largest of a
# sample each second, and their trend), open fds and the ingest→delivery p99. Then a session that never reads: the
# others' p99 with and without it, medians of 3 one-minute runs each. Not part of the test suite (about 20 minutes).
#
#   Benchmarks/soak.sh                     everything
#   Benchmarks/soak.sh --minutes 2         a shorter soak (the never-reading comparison as well)
#   Benchmarks/soak.sh --skip-stuck        the soak only
# Results: test-artifacts/soak/<UTC time>-{soak,plain,stuck}.{txt,json}.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10 stuck=1
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --skip-stuck) stuck=0; shift ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
scratch="${LANPUSH_BENCH_SCRATCH:-.build}"
./scripts/setup
. scripts/release-flags.sh
nice -n 10 swift build -c release --scratch-path "$scratch" --product lanpushd "${release_compile_flags[@]}"
nice -n 10 swift build -c release --scratch-path "$scratch" --product lanpush-bench "${release_compile_flags[@]}"
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)"
out=test-artifacts/soak
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
bench=("$bin/lanpush-bench" --lanpushd "$bin/lanpushd" --scenarios soak --servers lanpush -v)
"${bench[@]}" --runs 1 --soak-minutes "$minutes" --json "$out/$stamp-soak.json" | tee "$out/$stamp-soak.txt"
if [ $stuck = 1 ]; then
  "${bench[@]}" --runs 3 --soak-minutes 1 --json "$out/$stamp-plain.json" | tee "$out/$stamp-plain.txt"
  "${bench[@]}" --runs 3 --soak-minutes 1 --stuck --json "$out/$stamp-stuck.json" | tee "$out/$stamp-stuck.txt"
  for f in plain stuck; do
    printf '%s: worst minute p99 (median of 3): ' "$f"
    grep "worst period's p99" "$out/$stamp-$f.txt" | grep -o '[0-9.,]* ms' | head -1
  done
fi
echo "soak: results in $out/$stamp-*"
