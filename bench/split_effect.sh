#!/usr/bin/env bash
# Does splitting late events change what the probe measures? The rtapp
# probe's periodic task (2 ms of run every 10 ms) under burn, ROUNDS rounds
# (5 unless told) of SECONDS (5) each, with the late split (the default)
# and with --no-late-split, the two in turn (each round in the other order
# than the one before, so neither always follows the other): wake-up
# latency p50/p99 and negative slack per run, then the medians of each,
# and how many runs of each fell in the p50's low mode (below LOW_MS, 0.5
# ms unless told) with Fisher's exact test of the two counts (two-sided),
# and how many runs were too busy for their p50 to mean anything.
# With the CPU time read from CLOCK_THREAD_CPUTIME_ID at the end of each
# activation's work, the split's p50 was 0.08 ms against 1.7-3.4 ms
# without it (system::task_clock).
#   [ROUNDS=N] [LOW_MS=X] bench/split_effect.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FB=${FB:-$here/../target/release/feelbench}
secs=${1:-5}
rounds=${ROUNDS:-5}
low_ms=${LOW_MS:-0.5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    modes=(split no-split)
    [ $((round % 2)) = 0 ] && modes=(no-split split)
    for mode in "${modes[@]}"; do
        opt=(); [ "$mode" = no-split ] && opt=(--no-late-split)
        "$FB" run --probe rtapp:periodic --load burn -t "$secs" --timer-slack 50000 "${opt[@]}" \
            -q --no-store -o "$work/run.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
        python3 - "$work/run.json" "$mode" >> "$work/results" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["scenarios"][0]["result"]["figures"]
print(sys.argv[2], f["wakeup_p50_us"] / 1000, f["wakeup_p99_us"] / 1000, f["negative_slack_pct"])
PY
        tail -1 "$work/results"
    done
done
python3 "$here/medians.py" "$work/results" 1 "wake-up p50 (ms)" "p99 (ms)" "negative slack (%)"
python3 - "$work/results" "$low_ms" <<'PY'
import math, sys
runs = {}
busy = 0
for line in open(sys.argv[1]):
    mode, p50, _, negative = line.split()[:4]
    runs.setdefault(mode, []).append(float(p50))
    busy += float(negative) > 10
if busy:
    # A late activation's wake-up counts 0 us (rt-app's convention): with
    # most of them late the p50 is 0, which is no low mode.
    print(f"{busy} runs had over 10 % negative slack: the machine was too busy to tell")
low_ms = float(sys.argv[2])
(a, n1), (b, n2) = [(sum(p < low_ms for p in runs.get(m, [])), len(runs.get(m, []))) for m in ("split", "no-split")]
# Fisher's exact test: the probability of each table with these margins,
# summed over those no more likely than the one seen.
low, total = a + b, n1 + n2
def p_table(x):
    return math.comb(n1, x) * math.comb(n2, low - x) / math.comb(total, low)
seen = p_table(a)
p = sum(p_table(x) for x in range(max(0, low - n2), min(low, n1) + 1) if p_table(x) <= seen * (1 + 1e-9))
print(f"p50 below {low_ms} ms: split {a} of {n1}, no-split {b} of {n2}; Fisher's exact p = {p:.3f}")
PY
