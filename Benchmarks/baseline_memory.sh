#!/usr/bin/env bash
# Baseline memory: lanpushd's VmRSS 10 s after start with one device, no sessions, the store and mDNS on (with no
# avahi-daemon to reach, as on a machine without one: discovery is set up and retried), on loopback. The figure
# docs/BENCHMARKS.md ("Baseline memory") tracks for a Raspberry Pi add-on.
#
#   Benchmarks/baseline_memory.sh                 the release build scripts/install makes (staged, nothing installed)
#   Benchmarks/baseline_memory.sh BINARY [STARTS] an existing lanpushd; STARTS fresh starts (default 3)
#
# Prints, per start, VmRSS and its anonymous and file-backed parts, then the largest mappings of the last start.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d /tmp/lanpush-baseline.XXXXXX)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
binary="${1:-}"
starts="${2:-3}"
if [ -z "$binary" ]; then
  ./scripts/install --destdir "$work/root" >&2
  binary="$work/root/usr/local/bin/lanpushd"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/lanpush.yaml" <<EOF
listen: "127.0.0.1:$port"
admin_token: "baseline-admin-token-0123456789abcdef"
devices:
  - id: phone
    name: Phone
    token: "baseline-device-token-0123456789abcdef"
store:
  enabled: true
mdns:
  enabled: true
EOF
echo "lanpushd: $binary"
for i in $(seq "$starts"); do
  rm -rf "$work/state"
  "$binary" --config "$work/lanpush.yaml" --state-dir "$work/state" > "$work/lanpushd.log" 2>&1 &
  pid=$!
  sleep 10
  kill -0 "$pid" 2>/dev/null || { cat "$work/lanpushd.log" >&2; echo "baseline_memory: lanpushd exited" >&2; exit 1; }
  awk -v n="$i" '/^(VmRSS|RssAnon|RssFile):/ { v[$1] = $2 }
    END { printf "start %d: VmRSS %.1f MiB (anonymous %.1f, file-backed %.1f)\n", n, v["VmRSS:"]/1024, v["RssAnon:"]/1024, v["RssFile:"]/1024 }' \
    "/proc/$pid/status"
  [ "$i" = "$starts" ] && awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anonymous]" : $6) " " $2 } /^Rss:/ { rss[name] += $2 }
    END { for (n in rss) if (rss[n] >= 256) printf "  %6d KiB  %s\n", rss[n], n }' "/proc/$pid/smaps" | sort -rn
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
done
