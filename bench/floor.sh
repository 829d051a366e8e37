#!/usr/bin/env bash
# Benchmark, not a test: feelbench's latency floor against cyclictest's on an
# idle machine, like with like. Both wake every 1 ms and do no work, under the
# same policy (SCHED_FIFO 80 by default), back to back, in two settings:
#   desktop  no PM QoS: feelbench's default against `cyclictest --laptop`
#   pmqos0   PM QoS held at 0: feelbench --cpu-dma-latency 0 against
#            cyclictest's default (it writes 0 to /dev/cpu_dma_latency)
# and reports p50/p99/max, with how busy the machine was meanwhile. Goal:
# feelbench/cyclictest <= 1.1 for p50 and p99 in both settings. Needs root.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-t SECS] [-r ROUNDS] [-p POLICY] [-b PCT] [-h]
  -t SECS    measurement seconds per tool, setting and round (default 30)
  -r ROUNDS  rounds; the tools take turns going first (default 3)
  -p POLICY  fifo (SCHED_FIFO 80, default) or other (SCHED_OTHER, 1 ns timer slack)
  -b PCT     before each round of a setting, wait until the machine has been at
             most PCT % busy for 5 s, and leave out of the medians the rounds in
             which either tool saw it busier (default 100: keep every round)
  -h         this help
Compares feelbench's latency floor with cyclictest's (1 ms period, no work, idle
machine) without PM QoS (feelbench's default against cyclictest --laptop) and
with PM QoS held at 0 (feelbench --cpu-dma-latency 0 against cyclictest's
default). Goal: ratio <= 1.1.
EOF
}

secs=30
rounds=3
policy=fifo
busy_limit=100
while getopts ":t:r:p:b:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        r) rounds=$OPTARG ;;
        p) policy=$OPTARG ;;
        b) busy_limit=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "floor.sh: -t takes whole seconds >= 1" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "floor.sh: -r takes a whole number >= 1" >&2; exit 2; }
[[ $policy == fifo || $policy == other ]] || { echo "floor.sh: -p takes fifo or other" >&2; exit 2; }
[[ $busy_limit =~ ^[0-9]+$ ]] || { echo "floor.sh: -b takes a whole percentage" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "floor.sh: run as root (SCHED_FIFO, mlockall, /dev/cpu_dma_latency)" >&2; exit 1; }
command -v cyclictest >/dev/null || {
    echo "floor.sh: cyclictest is missing; install it with: apt-get install rt-tests" >&2
    exit 1
}

cd "$(dirname "$0")/.."
cargo build --release
feelbench=target/release/feelbench

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The same policy for both tools.
if [[ $policy == fifo ]]; then
    fb_policy=(--rt --rt-priority 80)
    ct_policy=(--policy=fifo -p 80)
else
    fb_policy=(--timer-slack 1)
    ct_policy=(--policy=other)
fi

# cyclictest has no timer-slack option, so it inherits ours (SCHED_FIFO
# ignores slack; SCHED_OTHER does not). Writing /proc/PID/timerslack_ns sets
# only the *current* slack; the kernel puts a task back to its *default* slack
# (its parent's slack at fork) when it leaves SCHED_FIFO, which cyclictest's
# start-up does. So set 1 ns in a subshell and fork (&) cyclictest from it,
# making 1 ns its default too.
# -N: nanosecond histogram buckets (cyclictest caps them at 10^6, so 0-1 ms;
# later wake-ups are overflows).
run_cyclictest() { # SETTING ; JSON goes to $tmp/ct-$setting.json
    local pm_qos=()
    [[ $1 == desktop ]] && pm_qos=(--laptop)
    local before; before=$(cpu_ticks)
    ( echo 1 >"/proc/$BASHPID/timerslack_ns"
      cyclictest -m -q -N -t 1 -i 1000 -D "$secs" -h 1000000 \
          --json="$tmp/ct-$1.json" "${ct_policy[@]}" "${pm_qos[@]}" >/dev/null 2>&1 &
      wait $! )
    echo "$round $1 cyclictest $(ct_summary "$tmp/ct-$1.json") $(busy_pct "$before")" >>"$tmp/results"
}

# "busy total" CPU ticks of the whole machine from /proc/stat (busy: all but
# idle and iowait).
cpu_ticks() {
    awk '/^cpu /{busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6}' /proc/stat
}

# The % of the machine's CPU time that was busy since BEFORE (cpu_ticks
# output), the measuring tool included (it uses a few %): more means other
# work disturbed the measurement.
busy_pct() {
    local b0 t0 b1 t1
    read -r b0 t0 <<<"$1"
    read -r b1 t1 <<<"$(cpu_ticks)"
    awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.1f", (t > 0 ? 100 * b / t : 0) }'
}

# Prints "p50 p99 max" in µs from cyclictest's JSON. Its histogram lists only
# non-empty buckets; overflows are cycles minus the histogram's sum and rank
# above every bucket, so a quantile that falls among them prints "inf".
ct_summary() {
    python3 - "$1" <<'PY'
import json, math, sys
t = json.load(open(sys.argv[1]))["thread"]["0"]
hist = sorted((int(ns), n) for ns, n in t["histogram"].items())
total = t["cycles"]
def q(f):
    rank, seen = max(1, math.ceil(f * total)), 0
    for ns, n in hist:
        seen += n
        if seen >= rank:
            return ns / 1000
    return math.inf
print(q(0.50), q(0.99), t["max"] / 1000)
PY
}

# Prints "p50 p99 max" in µs from feelbench's JSON.
fb_summary() {
    python3 - "$1" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["scenarios"][0]["result"]["figures"]
print(f["latency_p50_us"], f["latency_p99_us"], f["latency_max_us"])
PY
}

run_feelbench() { # SETTING
    local pm_qos=()
    [[ $1 == pmqos0 ]] && pm_qos=(--cpu-dma-latency 0)
    local before; before=$(cpu_ticks)
    "$feelbench" run --probe custom -C 0 -I 1000 --load none "${fb_policy[@]}" \
        "${pm_qos[@]}" -t "$secs" -q -o "$tmp/fb-$1.json" >/dev/null 2>"$tmp/fb.err" || true
    [[ -s $tmp/fb-$1.json ]] || { echo "floor.sh: feelbench wrote no JSON:" >&2; cat "$tmp/fb.err" >&2; exit 1; }
    echo "$round $1 feelbench $(fb_summary "$tmp/fb-$1.json") $(busy_pct "$before")" >>"$tmp/results"
}

# Waits until the machine has been at most $busy_limit % busy for 5 s.
wait_for_quiet() {
    ((busy_limit < 100)) || return 0
    local before pct
    while true; do
        before=$(cpu_ticks)
        sleep 5
        pct=$(busy_pct "$before")
        awk -v p="$pct" -v l="$busy_limit" 'BEGIN { exit !(p <= l) }' && return 0
        echo "   machine ${pct} % busy; waiting for at most ${busy_limit} %" >&2
    done
}

for ((round = 1; round <= rounds; round++)); do
    for setting in desktop pmqos0; do
        wait_for_quiet
        echo "== round $round/$rounds, $setting: both tools, ${secs}s each" >&2
        if ((round % 2)); then
            run_feelbench "$setting"; run_cyclictest "$setting"
        else
            run_cyclictest "$setting"; run_feelbench "$setting"
        fi
    done
done

# Table: every round, then the median per setting and tool over the rounds
# whose two measurements both saw the machine at most $busy_limit % busy, and
# the ratios of those medians (max: the largest of those rounds).
python3 - "$tmp/results" "$secs" "$policy" "$busy_limit" <<'PY'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
limit = float(sys.argv[4])
print(f"feelbench vs cyclictest, 1 ms period, no work, idle, {sys.argv[3]}, "
      f"{sys.argv[2]} s per tool, setting and round")
print("desktop: feelbench default vs cyclictest --laptop (no PM QoS)")
print("pmqos0:  feelbench --cpu-dma-latency 0 vs cyclictest default (PM QoS 0)")
print("busy %: the machine's CPU time in use meanwhile, the tool's own included")
print(f"{'round':<6}{'setting':<9}{'tool':<12}{'p50 us':>10}{'p99 us':>10}{'max us':>10}{'busy %':>8}")
pairs = {}
for rnd, s, t, *v in rows:
    v = [float(x) for x in v]
    print(f"{rnd:<6}{s:<9}{t:<12}{v[0]:>10.2f}{v[1]:>10.2f}{v[2]:>10.2f}{v[3]:>8.1f}")
    pairs.setdefault((rnd, s), {})[t] = v
quiet = {k: p for k, p in pairs.items() if all(v[3] <= limit for v in p.values())}
print(f"\nmedians of the rounds at most {limit:g} % busy (max: largest). Goal: ratio <= 1.1")
for s in ("desktop", "pmqos0"):
    kept = [p for (_, setting), p in quiet.items() if setting == s]
    if not kept:
        print(f"{s:<9}no round quiet enough")
        continue
    med = {}
    for t in ("feelbench", "cyclictest"):
        runs = [p[t] for p in kept]
        med[t] = [statistics.median(r[i] for r in runs) for i in (0, 1)]
        print(f"{s:<9}{t:<12}{med[t][0]:>10.2f}{med[t][1]:>10.2f}"
              f"{max(r[2] for r in runs):>10.2f}   ({len(runs)} rounds)")
    for name, i in (("p50", 0), ("p99", 1)):
        fb, ct = med["feelbench"][i], med["cyclictest"][i]
        if math.isinf(fb) or math.isinf(ct) or ct <= 0:
            print(f"{s:<9}ratio {name}: n/a (histogram overflow or zero)")
            continue
        r = fb / ct
        print(f"{s:<9}ratio {name} feelbench/cyclictest = {r:.3f}  {'ok' if r <= 1.1 else 'ABOVE GOAL'}")
PY
