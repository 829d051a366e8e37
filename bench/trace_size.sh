#!/usr/bin/env bash
# Benchmark, not a test: what `run --trace` costs. For x under burn, in
# turns, without and with `--explain` (root): the trace's size per second
# of measurement, its event slices and scheduling events (decoded with
# Perfetto's own protos by tests/perfetto/trace_counts.py), the time the
# run spent writing it (rendering, encoding and the atomic write, as the
# run says it), and the run's wall time beside the same run without
# --trace.
set -euo pipefail

secs=10
rounds=2
feelbench=
while getopts ":t:r:b:h" opt; do
    case $opt in
    t) secs=$OPTARG ;;
    r) rounds=$OPTARG ;;
    b) feelbench=$OPTARG ;;
    *) echo "usage: $(basename "$0") [-t SECS] [-r ROUNDS] [-b BINARY]"; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$feelbench" ]; then
    cargo build --release -q --manifest-path "$root/Cargo.toml"
    feelbench=$root/target/release/feelbench
fi
modes="plain"
[ "$(id -u)" = 0 ] && modes="plain explain"
out=$root/target/bench/trace_size/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); x under burn, -t $secs"
printf '%-8s %-5s %10s %9s %7s %8s %9s %8s %8s %-9s\n' \
    mode round bytes bytes/s events switches wakeups write_s wall_s untraced_s
for round in $(seq 1 "$rounds"); do
    for mode in $modes; do
        extra=()
        [ "$mode" = explain ] && extra=(--explain)
        base=(run --probe x --load burn -t "$secs" --warmup 1 --noise-check 0 -q --no-store "${extra[@]}")
        start=$(date +%s.%N)
        "$feelbench" "${base[@]}" -o "$out/$mode-$round.json" \
            --trace "$out/$mode-$round.pftrace" 2>"$out/$mode-$round.err" >/dev/null
        wall=$(echo "$(date +%s.%N) - $start" | bc)
        start=$(date +%s.%N)
        "$feelbench" "${base[@]}" -o "$out/$mode-$round-untraced.json" >/dev/null 2>&1
        untraced=$(echo "$(date +%s.%N) - $start" | bc)
        bytes=$(stat -c %s "$out/$mode-$round.pftrace")
        write_s=$(sed -n 's/.*trace written to .* (\([0-9.]*\) s).*/\1/p' "$out/$mode-$round.err")
        python3 "$root/tests/perfetto/trace_counts.py" "$out/$mode-$round.pftrace" >"$out/$mode-$round.counts.json"
        read -r events switches wakeups < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["slices"].get("event", 0), d["sched"].get("sched_switch", 0), d["sched"].get("sched_wakeup", 0))
' "$out/$mode-$round.counts.json")
        printf '%-8s %-5s %10s %9.0f %7s %8s %9s %8s %8.2f %-9.2f\n' \
            "$mode" "$round" "$bytes" "$(echo "$bytes / $secs" | bc -l)" "$events" "$switches" \
            "$wakeups" "${write_s:-?}" "$wall" "$untraced"
    done
done
echo "files in $out"
