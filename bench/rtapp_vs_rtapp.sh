#!/usr/bin/env bash
# feelbench's rtapp probe against the real rt-app (Debian's rt-app), on the
# same files, under no load and under burn: wake-up latency p50/p99 and the
# share of activations with negative slack, from rt-app's per-loop logs
# (wu_lat and slack columns of its timer-driven tasks) and from feelbench's
# run document. rt-app's SCHED_OTHER threads keep the kernel's 50 us timer
# slack; feelbench's probe asks for 1 ns unless told: compare like with like
# with FBARGS="--timer-slack 50000". ROUNDS rounds (3 unless told) of the
# four scenarios, each tool once per round, then each tool's median over
# the rounds and their ratio. About 50 s per round at 10 s.
#   [FBARGS=...] [ROUNDS=N] bench/rtapp_vs_rtapp.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FB=${FB:-$here/../target/release/feelbench}
secs=${1:-10}
rounds=${ROUNDS:-3}
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

# One line per round, workload and load: both tools' figures.
results="$work/results.tsv"
for round in $(seq 1 "$rounds"); do
for spec in periodic audio-chain; do
    src="$work/$spec.json"
    cp "$here/../workloads/rtapp/$spec.json" "$src"
    for load in none burn; do
        logs="$work/$spec-$load-$round"; mkdir -p "$logs"
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
        python3 - "$logs/fb.json" "$round" "$spec/$load" "$n" "$p50" "$p99" "$negpct" >> "$results" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["scenarios"][0]["result"]["figures"]
mine = (f["activations"], f["wakeup_p50_us"] / 1000, f["wakeup_p99_us"] / 1000, f["negative_slack_pct"])
print("\t".join(sys.argv[2:] + [f"{v:.4f}" for v in mine]))
PY
        tail -1 "$results"
    done
done
done

# Per workload and load: each tool's median over the rounds, and the ratio
# of the medians (feelbench / rt-app).
python3 - "$results" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    r = line.split("\t")
    rows.setdefault(r[1], []).append([float(v) for v in r[2:]])
print(f"\n{'':20} {'':9} {'act':>6}  {'p50 ms':>8}  {'p99 ms':>8}  {'neg %':>6}   (medians of {len(next(iter(rows.values())))} rounds)")
for what, rs in rows.items():
    med = [st.median(col) for col in zip(*rs)]
    rt, fb = med[0:4], med[4:8]
    ratio = lambda a, b: f"{a / b:.2f}" if b else "-"
    print(f"{what:20} {'rt-app':9} {rt[0]:6.0f}  {rt[1]:8.3f}  {rt[2]:8.3f}  {rt[3]:6.2f}")
    print(f"{'':20} {'feelbench':9} {fb[0]:6.0f}  {fb[1]:8.3f}  {fb[2]:8.3f}  {fb[3]:6.2f}"
          f"   ratio p50 {ratio(fb[1], rt[1])}  p99 {ratio(fb[2], rt[2])}  neg {ratio(fb[3], rt[3])}")
PY
