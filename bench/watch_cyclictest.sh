#!/usr/bin/env bash
# Benchmark, not a test: the timer canary of `feelbench watch` beside
# cyclictest (rt-tests), both at SCHED_OTHER with a 1 ms period on the same
# CPU at the same time: their p50 and p99, and the canary's over
# cyclictest's. cyclictest's percentiles come from its histogram (1 µs
# buckets), the canary's from its own (3 significant digits). The canary's
# latency is its event's split delay (wake-up late plus anything after it),
# read after the late split's readings; cyclictest's is its wake-up
# reading minus the due time.
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-b BUILD] [-t SECS] [-c CPU]
  -b BUILD  feelbench binary (default target/release/feelbench)
  -t SECS   seconds (default 60)
  -c CPU    the CPU both run on (default 1)
EOF2
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench secs=60 cpu=1
while getopts ":b:t:c:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        t) secs=$OPTARG ;;
        c) cpu=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
command -v cyclictest >/dev/null || { echo "cyclictest is missing: apt-get install rt-tests" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
cyclictest -q -m -p 0 --policy=other -t 1 -a "$cpu" -i 1000 -D "${secs}s" -h 100000 \
    --histfile="$work/hist" >/dev/null &
cyclic=$!
"$build" watch -t "$secs" --canary timer --cpus "$cpu" --no-recorder -o "$work/w.json" >/dev/null 2>&1
wait "$cyclic"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/hist" "$work/w.json" <<'PY'
import json, sys
counts = []
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    us, n = line.split()[:2]
    counts.append((int(us), int(n)))
total = sum(n for _, n in counts)
def q(p):
    seen = 0
    for us, n in counts:
        seen += n
        if seen >= p * total:
            return us / 1000
doc = json.load(open(sys.argv[2]))
t = next(c for c in doc["canaries"] if c["name"] == "timer")
c50, c99 = q(0.5), q(0.99)
print(f"cyclictest: {total} wake-ups, p50 {c50:.3f} ms, p99 {c99:.3f} ms (1 us buckets; over 100 ms not in them)")
print(f"timer canary: {t['events']} events, p50 {t['p50_ms']:.3f} ms, p99 {t['p99_ms']:.3f} ms")
print(f"canary / cyclictest: p50 {t['p50_ms'] / max(c50, 0.001):.2f}, p99 {t['p99_ms'] / max(c99, 0.001):.2f}")
PY
