#!/usr/bin/env bash
# Does splitting late events change what the probe measures? The rtapp
# probe's periodic task (2 ms of run every 10 ms) under burn, ROUNDS rounds
# (5 unless told) of SECONDS (5) each, alternately with the late split (the
# default) and with --no-late-split: wake-up latency p50/p99 and negative
# slack per run, then the medians of each. With the CPU time read from
# CLOCK_THREAD_CPUTIME_ID at the end of each activation's work, the split's
# p50 was 0.08 ms against 1.7-3.4 ms without it (system::task_clock).
#   [ROUNDS=N] bench/split_effect.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FB=${FB:-$here/../target/release/feelbench}
secs=${1:-5}
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    for mode in split no-split; do
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
