#!/usr/bin/env bash
# feelbench's rtapp probe against the real rt-app (Debian's rt-app 1.0), on
# the same files: the shipped workloads and rt-app 1.0's own example files
# that have a timer, under no load and (for WITH_BURN, periodic and
# audio-chain unless told) beside four shell busy loops. Per run: the
# activations, wake-up latency p50/p99 and the share of activations with
# negative slack, from rt-app's per-loop logs (the wu_lat and slack columns
# of its timer-driven phase loops, c_period > 0) and from feelbench's run
# document. feelbench runs twice per scenario: at rt-app's 50 us timer slack
# (rt-app's SCHED_OTHER threads keep the kernel's default) and at its own
# defaults (1 ns), as a new user runs it. Each file is given the same
# duration, log directory and calibration for both tools (text edits: the
# examples are not strict JSON). ROUNDS rounds (3 unless told) of every
# scenario, each tool once per round, then each tool's median over the
# rounds and the ratio to rt-app's.
#   [ROUNDS=N] [WORKLOADS="periodic ... tutorial/example2.json"]
#   [WITH_BURN="periodic audio-chain"] bench/rtapp_vs_rtapp.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FB=${FB:-$here/../target/release/feelbench}
secs=${1:-5}
rounds=${ROUNDS:-3}
examples=/usr/share/doc/rt-app/examples
# rt-app's examples with a timer that rt-app 1.0 reads as feelbench does:
# mp3-*, video-*, browser-*, example5 and spreading-tasks repeat keys or
# have bare ones, which rt-app reads only after its workgen script renames
# them (Debian does not ship it): rt-app would run another workload. dvfs.json
# spins SCHED_FIFO for 0.9 s at a time: left out on a shared machine. The
# other examples have no timer.
WORKLOADS=${WORKLOADS:-"periodic audio-chain compositor browser-tab template.json tutorial/example2.json tutorial/example3.json"}
WITH_BURN=${WITH_BURN-"periodic audio-chain"}
work=$(mktemp -d)
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done; hogs=(); }
start_hogs() { for i in 1 2 3 4; do (exec sh -c 'while :; do :; done') & hogs+=($!); done; }
trap 'stop_hogs; rm -rf "$work"' EXIT
command -v rt-app >/dev/null || { echo "rt-app is not installed (apt-get install rt-app)"; exit 1; }

# The file of workload $1: a shipped one's, or one of rt-app's examples.
source_of() {
    case "$1" in
        *.json) echo "$examples/$1" ;;
        *) echo "$here/../workloads/rtapp/$1.json" ;;
    esac
}

# Workload file $1 with global duration $3, logdir $2, calibration $4 and
# ftrace off, written to stdout: text edits, keys added to `global` (made
# when missing) where the file lacks them.
edit_global() {
    python3 - "$@" <<'PY'
import re, sys
path, logdir, secs, pload = sys.argv[1:5]
text = open(path).read()
want = {"duration": secs, "logdir": f'"{logdir}"', "log_basename": '"rt"',
        "calibration": pload, "ftrace": "false", "gnuplot": "false"}
if not re.search(r'"global"\s*:\s*\{', text):
    text = re.sub(r'^\s*\{', '{ "global" : { },', text, count=1)
for key, value in want.items():
    pattern = r'("%s"\s*:\s*)("[^"]*"|[-\w.]+)' % key
    if re.search(pattern, text):
        text = re.sub(pattern, lambda m: m.group(1) + value, text, count=1)
    else:
        text = re.sub(r'("global"\s*:\s*\{)', lambda m: f'{m.group(1)} "{key}" : {value},', text, count=1)
# A comma left before the closing brace of a global made empty is fine for
# both readers (json-c and feelbench take trailing commas).
print(text)
PY
}

# rt-app's numbers: every log line of a timer-driven phase loop.
rtapp_figures() {
    python3 - "$@" <<'PY'
import sys, glob
wu, neg, n = [], 0, 0
for path in glob.glob(sys.argv[1] + "/*.log"):
    for line in open(path):
        f = line.split()
        if len(f) < 11 or f[0].startswith("#") or int(f[9]) == 0:
            continue
        n += 1
        wu.append(int(f[10]))
        neg += int(f[7]) < 0
wu.sort()
q = lambda p: wu[min(len(wu) - 1, int(p * len(wu)))] if wu else 0
print(f"{n} {q(0.50)/1000:.3f} {q(0.99)/1000:.3f} {100*neg/max(n,1):.1f}")
PY
}

# feelbench's probe on file $1 under load $2 (with the extra options $4),
# its run in $3; its figures on stdout.
fb() {
    # shellcheck disable=SC2086
    "$FB" run --probe "rtapp:$1" --load "$2" -t "$secs" $4 -q --no-store -o "$3" >/dev/null 2>"$3.err" || { echo "feelbench failed: $(head -3 "$3.err")" >&2; echo "nan nan nan nan"; return 0; }
    python3 - "$3" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["scenarios"][0]["result"]["figures"]
print(f["activations"], f["wakeup_p50_us"] / 1000, f["wakeup_p99_us"] / 1000, f["negative_slack_pct"])
PY
}

# rt-app calibrates its `run` loops at start; under burn that calibration
# is wrong (a busy CPU makes each loop look slow). Calibrate once on the
# idle machine, then correct it by the time its own log gives `run 2000`
# (rt-app takes whole ns per loop, so within a few %).
edit_global "$(source_of periodic)" "$work" 1 '"CPU0"' > "$work/cal.json"
pload=$(rt-app "$work/cal.json" 2>&1 | sed -n 's/.*pLoad = \([0-9]*\)ns.*/\1/p' | head -1)
edit_global "$(source_of periodic)" "$work" 1 "${pload:?rt-app did not say its pLoad}" > "$work/cal2.json"
rm -f "$work"/*.log
rt-app "$work/cal2.json" >/dev/null 2>&1
pload=$(python3 - "$work" "$pload" <<'PY'
import glob, statistics, sys
runs = [int(l.split()[2]) for p in glob.glob(sys.argv[1] + "/*.log") for l in open(p)
        if l.strip() and not l.startswith("#")]
print(max(1, round(int(sys.argv[2]) * statistics.median(runs) / 2000)))
PY
)
echo "rt-app's calibration on the idle machine, corrected by its run's time: $pload ns per loop"

results="$work/results.tsv"
for round in $(seq 1 "$rounds"); do
for spec in $WORKLOADS; do
    loads=none
    case " $WITH_BURN " in *" $spec "*) loads="none burn" ;; esac
    for load in $loads; do
        logs="$work/$(echo "$spec" | tr / _)-$load-$round"; mkdir -p "$logs"
        edit_global "$(source_of "$spec")" "$logs" "$secs" "$pload" > "$logs/w.json"
        [ "$load" = burn ] && start_hogs
        rt-app "$logs/w.json" > "$logs/rt.out" 2>&1 || true
        read -r n p50 p99 negpct < <(rtapp_figures "$logs")
        slack=$(fb "$logs/w.json" none "$logs/fb50.json" "--timer-slack 50000")
        plain=$(fb "$logs/w.json" none "$logs/fb.json" "")
        stop_hogs
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$spec/$load" "$n" "$p50" "$p99" "$negpct" \
            "$(echo "$slack" | tr ' ' '\t')" "$(echo "$plain" | tr ' ' '\t')" >> "$results"
        tail -1 "$results"
    done
done
done

# Per workload and load: each tool's median over the rounds, and the ratio
# of the medians to rt-app's.
python3 - "$results" "$secs" <<'PY'
import math, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    r = line.rstrip("\n").split("\t")
    rows.setdefault(r[1], []).append([float(v) for v in r[2:]])
n = len(next(iter(rows.values())))
print(f"\n{'':34} {'act':>6} {'p50 ms':>8} {'p99 ms':>8} {'neg %':>6}   (medians of {n} rounds of {sys.argv[2]} s)")
def med(col):
    col = [v for v in col if not math.isnan(v)]
    return st.median(col) if col else float("nan")
ratio = lambda a, b: f"{a / b:.2f}" if b else "-"
for what, rs in rows.items():
    m = [med(col) for col in zip(*rs)]
    rt, slack, plain = m[0:4], m[4:8], m[8:12]
    print(what)
    for name, v in (("  rt-app", rt), ("  feelbench, 50 us slack", slack), ("  feelbench, defaults", plain)):
        extra = "" if v is rt else f"   p50 {ratio(v[1], rt[1])}x  p99 {ratio(v[2], rt[2])}x"
        print(f"{name:34} {v[0]:6.0f} {v[1]:8.3f} {v[2]:8.3f} {v[3]:6.2f}{extra}")
PY
