#!/usr/bin/env bash
# Benchmark, not a test: the probe thread's run-queue wait as feelbench
# attributes it against `perf sched timehist` on the same run. perf records
# sched_switch/sched_wakeup on every CPU (-k CLOCK_MONOTONIC, the probe's
# clock) around `feelbench run --probe x --load LOAD --explain`; for the
# probe's task thread (the one whose late events feelbench split) the
# script adds up, for the switch-ins inside the measurement window, the
# time timehist says it waited for the CPU: its "sch delay" (wake-up to
# switch-in) and, after a preemption (state R at its previous switch-out),
# the whole time off the CPU (timehist shows that as "wait time")
# (`late.explain.window_ns`), and prints it beside feelbench's
# `all.run_queue_wake_ns + all.run_queue_preempted_ns` (the late split's
# parts, from the thread's schedstat, added over its events) and the
# recorder's own total for the thread (`late.explain.threads[].wait_ns`,
# the waits that ended in the window). Goal: within 10 %. It also prints
# the share of late frames labelled run-queue wait and the share of their
# run-queue wait the recorder attributes to the load's own processes by
# name (`LOAD#N...`), of the split's run-queue part of those frames and of
# the time the recorder named at all (the rest is other processes: on a
# shared machine, other runs' loads). Goals under burn: 90 % each. Needs root and linux-perf (apt-get install linux-perf).
set -euo pipefail

load=burn
secs=3
rounds=3
feelbench=
while getopts ":l:t:r:b:h" opt; do
    case $opt in
    l) load=$OPTARG ;;
    t) secs=$OPTARG ;;
    r) rounds=$OPTARG ;;
    b) feelbench=$OPTARG ;;
    *) echo "usage: $(basename "$0") [-l LOAD] [-t SECS] [-r ROUNDS] [-b BINARY]"; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf missing: apt-get install linux-perf" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$feelbench" ]; then
    cargo build --release -q --manifest-path "$root/Cargo.toml"
    feelbench=$root/target/release/feelbench
fi
out=$root/target/bench/explain_agree/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
# perf resolves tracepoints through tracefs: mounted for the script if it
# is not, and unmounted again.
if [ ! -d /sys/kernel/tracing/events ]; then
    mount -t tracefs nodev /sys/kernel/tracing
    trap 'umount /sys/kernel/tracing' EXIT
fi
printf '%-6s %12s %12s %12s %13s %11s %9s %9s %12s\n' round split_ms timehist_ms recorder_ms split_diff_% rec_diff_% rq_late_% by_load_% of_named_%
for round in $(seq 1 "$rounds"); do
    data=$out/perf-$round.data
    run=$out/run-$round.json
    perf record -q -k CLOCK_MONOTONIC -a -o "$data" \
        -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_wakeup_new -e sched:sched_migrate_task \
        -- "$feelbench" run --probe x --load "$load" -t "$secs" --explain --noise-check 0 -q -o "$run" \
        >"$out/run-$round.log" 2>&1
    perf sched timehist --state -i "$data" >"$out/timehist-$round.txt" 2>/dev/null
    python3 - "$run" "$out/timehist-$round.txt" "$round" <<'PY'
import json, sys
run, timehist, round_ = sys.argv[1:4]
scenario = json.load(open(run))["scenarios"][0]
late = scenario["result"]["late"]
counts = late["tally"]["counts"]
ours = counts["all.run_queue_wake_ns"] + counts["all.run_queue_preempted_ns"]
explain = late["explain"]
start, end = explain["window_ns"]
# The task thread: the probe thread the recorder saw wait most.
thread = max(explain["threads"], key=lambda t: t["wait_ns"])
tid = thread["tid"]
delay_ms = 0.0
preempted = False
for line in open(timehist):
    f = line.split()
    # time cpu task[tid/pid] wait sch_delay run_time state
    if len(f) < 7 or not f[0][0].isdigit() or not (f"[{tid}]" in f[2] or f"[{tid}/" in f[2]):
        continue
    try:
        t, wait, delay, run_ms = float(f[0]), float(f[3]), float(f[4]), float(f[5])
    except ValueError:
        continue
    switch_in_ns = (t - run_ms / 1e3) * 1e9
    if start <= switch_in_ns <= end:
        delay_ms += delay + (wait if preempted else 0.0)
    preempted = f[6] == "R"
ours_ms = ours / 1e6
rec_ms = thread["wait_ns"] / 1e6
diff = lambda ms: 100 * (ms - delay_ms) / delay_ms if delay_ms else float("nan")
load = scenario["load"]
worst = late["worst"]
queued = [e for e in worst if e["cause"].startswith("run_queue")]
rq_late = 100 * len(queued) / len(worst) if worst else float("nan")
rq_ns = sum(e["parts"]["run_queue_wake_ns"] + e["parts"]["run_queue_preempted_ns"] for e in queued)
by_load = sum(r["ns"] for e in queued for r in e.get("ran_instead", []) if r["task"].startswith(load + "#"))
by_load_pct = 100 * by_load / rq_ns if rq_ns else float("nan")
named = sum(r["ns"] for e in queued for r in e.get("ran_instead", []))
of_named = 100 * by_load / named if named else float("nan")
print(f"{round_:<6} {ours_ms:12.1f} {delay_ms:12.1f} {rec_ms:12.1f} {diff(ours_ms):13.1f} {diff(rec_ms):11.1f} {rq_late:9.1f} {by_load_pct:9.1f} {of_named:12.1f}")
PY
    rm -f "$data"
done
echo "files: $out"
