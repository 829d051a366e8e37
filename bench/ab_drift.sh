#!/usr/bin/env bash
# Benchmark, not a test: what the order of the arms does under drift. A
# background load ramps up during each experiment (one more busy process
# every STEP seconds, up to MAX); the two arms are the same setting (a and
# b set nothing, no A/A control); the same experiment runs once with every
# round in the arms' order (--order fixed, b always after a) and once in
# balanced orders. Counts the comparisons called different (after BH) and
# with raw p at or below ALPHA, and the shift of b against a on the
# probes' overview figures: under a fixed order the drift reads as b worse.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-b BUILD] [-r ROUNDS] [-t SECS] [-s STEP] [-m MAX] [-a ALPHA] [-w DIR]
  -b BUILD   feelbench binary (default target/release/feelbench)
  -r ROUNDS  rounds per experiment (default 8)
  -t SECS    seconds per scenario (default 2)
  -s STEP    seconds between two more background processes (default 10)
  -m MAX     most background processes (default 4)
  -a ALPHA   false discovery rate of the verdicts (default 0.05)
  -w DIR     where experiments are kept (default target/bench-ab-drift)
EOF
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench work=$PWD/target/bench-ab-drift
rounds=8 secs=2 step=10 max=4 alpha=0.05
while getopts ":b:r:t:s:m:a:w:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        r) rounds=$OPTARG ;;
        t) secs=$OPTARG ;;
        s) step=$OPTARG ;;
        m) max=$OPTARG ;;
        a) alpha=$OPTARG ;;
        w) work=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
source bench/ab_common.sh
mkdir -p "$work"

ramp_pid=
# ramp: one more busy process every $step s, up to $max, in the
# background (its own process group, so stop_ramp ends all of it).
ramp() {
    setsid bash -c 'for _ in $(seq "$1"); do sleep "$2"; ( while :; do :; done ) & done; wait' ramp "$max" "$step" &
    ramp_pid=$!
}
stop_ramp() {
    [[ -n $ramp_pid ]] && kill -- -"$ramp_pid" 2>/dev/null || true
    ramp_pid=
}
trap stop_ramp EXIT

echo "drift: a load ramping to $max processes (one every $step s), arms a = b, $rounds rounds, -t $secs"
printf '%-9s %11s %7s %9s  %s\n' order comparisons called "raw p<=a" "shift of b on overview figures (%)"
for order in fixed balanced; do
    dir=$work/$order
    if [[ ! -f $dir/experiment.json ]]; then
        ramp
        experiment "$dir" --probe x,audio --load none --no-aa --arm a --arm b --order "$order" \
            --rounds "$rounds" -t "$secs" --seed 1 --alpha "$alpha"
        stop_ramp
    fi
    read -r t c r < <(called "$dir")
    shifts=$(python3 - "$dir/experiment.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
v = [c["relative"]["shift_pct"] for s in e["analysis"]["scenarios"] for f in s["figures"]
     if f["overview"] for c in f["comparisons"] if c.get("relative")]
print(" ".join("%+.1f" % x for x in v) or "-")
PY
)
    printf '%-9s %11s %7s %9s  %s\n' "$order" "$t" "$c" "$r" "$shifts"
done
