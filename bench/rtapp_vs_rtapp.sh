#!/usr/bin/env bash
# feelbench's rtapp probe against the real rt-app (Debian's rt-app), on the
# same files, under no load and under burn: wake-up latency p50/p99 and the
# share of activations with negative slack, from rt-app's per-loop logs
# (wu_lat and slack columns of its timer-driven tasks) and from feelbench's
# run document. rt-app's SCHED_OTHER threads keep the kernel's 50 us timer
# slack; feelbench's probe asks for 1 ns unless told: compare like with like
# with FBARGS="--timer-slack 50000". About 2.5 minutes.
#   [FBARGS=...] bench/rtapp_vs_rtapp.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FB=${FB:-$here/../target/release/feelbench}
secs=${1:-10}
work=$(mktemp -d)
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done; hogs=(); }
trap 'stop_hogs; rm -rf "$work"' EXIT
command -v rt-app >/dev/null || { echo "rt-app is not installed (apt-get install rt-app)"; exit 1; }

# rt-app's numbers: every log line of a timer-driven task (c_period > 0).
rtapp_figures() {
    python3 - "$@" <<'PY'
import sys, glob
wu, neg, n = [], 0, 0
for path in glob.glob(sys.argv[1] + "/*.log"):
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#") or int(f[9]) == 0:
            continue
        n += 1
        wu.append(int(f[10]))
        neg += int(f[7]) < 0
wu.sort()
q = lambda p: wu[min(len(wu) - 1, int(p * len(wu)))]
print(f"{n} {q(0.50)/1000:.3f} {q(0.99)/1000:.3f} {100*neg/max(n,1):.1f}")
PY
}

# rt-app calibrates its `run` loops at start; under burn that calibration
# is wrong (a busy CPU makes each loop look slow, so `run` does less work).
# Calibrate once on the idle machine and give rt-app that ns per loop.
python3 - "$here/../workloads/rtapp/periodic.json" "$work" > "$work/cal.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["global"].update(duration=1, logdir=sys.argv[2], log_basename="cal")
print(json.dumps(w))
PY
pload=$(rt-app "$work/cal.json" 2>&1 | sed -n 's/.*pLoad = \([0-9]*\)ns.*/\1/p' | head -1)
echo "rt-app's calibration on the idle machine: ${pload:?rt-app did not say its pLoad} ns per loop"

for spec in periodic audio-chain; do
    src="$work/$spec.json"
    cp "$here/../workloads/rtapp/$spec.json" "$src"
    for load in none burn; do
        logs="$work/$spec-$load"; mkdir -p "$logs"
        python3 - "$src" "$logs" "$secs" "$pload" > "$logs/rt.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))  # the shipped files are strict JSON
w.setdefault("global", {}).update(duration=int(sys.argv[3]), logdir=sys.argv[2], log_basename="rt", calibration=int(sys.argv[4]))
print(json.dumps(w, indent=1))
PY
        [ "$load" = burn ] && for i in 1 2 3 4; do (exec sh -c 'while :; do :; done') & hogs+=($!); done
        rt-app "$logs/rt.json" > "$logs/rt.out" 2>&1 || true
        stop_hogs
        read -r n p50 p99 negpct < <(rtapp_figures "$logs")
        "$FB" run --probe "rtapp:$spec" --load "$load" -t "$secs" ${FBARGS:-} -q --no-store -o "$logs/fb.json" >/dev/null 2>"$logs/fb.err" || { cat "$logs/fb.err"; continue; }
        python3 - "$logs/fb.json" "$spec/$load" "$n" "$p50" "$p99" "$negpct" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["scenarios"][0]["result"]["figures"]
what, n, p50, p99, neg = sys.argv[2], int(sys.argv[3]), *map(float, sys.argv[4:])
mine = (f["activations"], f["wakeup_p50_us"] / 1000, f["wakeup_p99_us"] / 1000, f["negative_slack_pct"])
ratio = lambda a, b: f"{a / b:.2f}" if b else "-"
print(f"{what:20} rt-app    {n:6d} act  p50 {p50:7.3f} ms  p99 {p99:7.3f} ms  neg slack {neg:5.1f} %")
print(f"{'':20} feelbench {mine[0]:6.0f} act  p50 {mine[1]:7.3f} ms  p99 {mine[2]:7.3f} ms  neg slack {mine[3]:5.1f} %"
      f"   feelbench/rt-app: p50 {ratio(mine[1], p50)}  p99 {ratio(mine[2], p99)}  neg {ratio(mine[3], neg)}")
PY
    done
done
