#!/usr/bin/env bash
# Benchmark, not a test: feelbench's latency floor against cyclictest's on an
# idle machine. Both wake every 1 ms, run back to back under the same policy
# (SCHED_OTHER with 1 ns timer slack, then SCHED_FIFO 80), and report p50/p99/max.
# Goal: feelbench/cyclictest <= 1.1 for p50 and p99. Needs root.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-t SECS] [-r ROUNDS] [-h]
  -t SECS    measurement seconds per tool, policy and round (default 30)
  -r ROUNDS  rounds; the tools take turns going first (default 3)
  -h         this help
Compares feelbench's latency floor with cyclictest's (1 ms period, idle machine,
SCHED_OTHER with 1 ns timer slack, then SCHED_FIFO 80). Goal: ratio <= 1.1.
EOF
}

secs=30
rounds=3
while getopts ":t:r:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        r) rounds=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "floor.sh: -t takes whole seconds >= 1" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "floor.sh: -r takes a whole number >= 1" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "floor.sh: run as root (SCHED_FIFO, mlockall)" >&2; exit 1; }

if ! command -v cyclictest >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >/dev/null
fi

cd "$(dirname "$0")/.."
cargo build --release
feelbench=target/release/feelbench

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# cyclictest has no timer-slack option, so it inherits ours. Writing
# /proc/PID/timerslack_ns sets only the *current* slack; the kernel puts a task
# back to its *default* slack (its parent's slack at fork) when it leaves
# SCHED_FIFO, which cyclictest's start-up does. So set 1 ns in a subshell and
# fork (&) cyclictest from it, making 1 ns its default too.
# -N: nanosecond histogram buckets (cyclictest caps them at 10^6, so 0-1 ms;
# later wake-ups are overflows). --default-system: leave /dev/cpu_dma_latency
# alone, as feelbench does.
run_cyclictest() { # POLICY_ARGS... ; JSON goes to $tmp/ct-$policy.json
    ( echo 1 >"/proc/$BASHPID/timerslack_ns"
      cyclictest -m -q -N --default-system -t 1 -i 1000 -D "$secs" -h 1000000 \
          --json="$tmp/ct-$policy.json" "$@" >/dev/null &
      wait $! )
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

run_feelbench() { # POLICY
    local rt_flag=()
    [[ $1 == rt ]] && rt_flag=(--rt --rt-priority 80)
    "$feelbench" run --probe custom --custom-cpu 0 --custom-interval 1000 --load none \
        --timer-slack 1 -t "$secs" -q -o "$tmp/fb-$1.json" "${rt_flag[@]}" >/dev/null 2>&1
    [[ -s $tmp/fb-$1.json ]] || { echo "floor.sh: feelbench wrote no JSON" >&2; exit 1; }
    echo "$1 feelbench $(fb_summary "$tmp/fb-$1.json")" >>"$tmp/results"
}

run_cyclictest_policy() { # POLICY
    local ct_policy=(--policy=other)
    [[ $1 == rt ]] && ct_policy=(--policy=fifo -p 80)
    run_cyclictest "${ct_policy[@]}" 2>/dev/null
    echo "$1 cyclictest $(ct_summary "$tmp/ct-$1.json")" >>"$tmp/results"
}

for ((round = 1; round <= rounds; round++)); do
    for policy in other rt; do
        echo "== round $round/$rounds, $policy: both tools, ${secs}s each" >&2
        if ((round % 2)); then
            run_feelbench "$policy"; run_cyclictest_policy "$policy"
        else
            run_cyclictest_policy "$policy"; run_feelbench "$policy"
        fi
    done
done

# Table: every round, then the median per policy and tool and the ratios of
# the medians (max: the largest of all rounds).
python3 - "$tmp/results" "$secs" <<'PY'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"feelbench vs cyclictest, 1 ms period, idle, {sys.argv[2]} s per tool, policy and round")
print(f"{'policy':<7}{'tool':<12}{'p50 us':>10}{'p99 us':>10}{'max us':>10}")
fig = {}
for p, t, *v in rows:
    v = [float(x) for x in v]
    print(f"{p:<7}{t:<12}{v[0]:>10.2f}{v[1]:>10.2f}{v[2]:>10.2f}")
    fig.setdefault((p, t), []).append(v)
print(f"\nmedian of {len(fig[('other', 'feelbench')])} rounds (max: largest). Goal: ratio <= 1.1")
med = {}
for (p, t), runs in fig.items():
    med[(p, t)] = [statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)]
    print(f"{p:<7}{t:<12}{med[(p, t)][0]:>10.2f}{med[(p, t)][1]:>10.2f}{max(r[2] for r in runs):>10.2f}")
for p in ("other", "rt"):
    fb, ct = med[(p, "feelbench")], med[(p, "cyclictest")]
    for name, i in (("p50", 0), ("p99", 1)):
        if math.isinf(fb[i]) or math.isinf(ct[i]) or ct[i] <= 0:
            print(f"{p:<7}ratio {name}: n/a (histogram overflow or zero)")
            continue
        r = fb[i] / ct[i]
        print(f"{p:<7}ratio {name} feelbench/cyclictest = {r:.2f}  {'ok' if r <= 1.1 else 'ABOVE GOAL'}")
PY
