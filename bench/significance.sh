#!/usr/bin/env bash
# Benchmark, not a test: how much measuring `feelbench compare` needs before a
# known difference is called significant. Two settings are measured with the
# x probe under burn at growing durations; each pair is compared and the
# verdicts of mean latency, p99 and deadlines met are printed per duration.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-p nice|rt] [-d "SECS ..."] [-n REPEATS] [-a ALPHA] [-h]
  -p PAIR     nice: loads at nice 0 (baseline) vs nice 19;
              rt:   probe SCHED_OTHER (baseline) vs --rt (SCHED_FIFO);
              pin:  loads on any CPU (baseline) vs --load-cpus 1;
              weight: --load-cpu-weight 100 (baseline) vs 10   (default nice)
  -d "SECS"   measured seconds per scenario to try, in order (default "0.5 1 2 4 8")
  -n REPEATS  --repeat of each run (default 1: batch-means intervals)
  -a ALPHA    significance level of compare (default 0.01)
  -h          this help
Prints, per duration, each figure's change, verdict and p-value, and the
measuring time the pair took (2 runs x REPEATS x SECS). Needs root for --rt
and weight.
EOF
}

pair=nice
durations="0.5 1 2 4 8"
repeats=1
alpha=0.01
while getopts ":p:d:n:a:h" opt; do
    case $opt in
        p) pair=$OPTARG ;;
        d) durations=$OPTARG ;;
        n) repeats=$OPTARG ;;
        a) alpha=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
case $pair in
    nice) base=(--load-nice 0 -m "loads nice 0"); other=(--load-nice 19 -m "loads nice 19") ;;
    rt) base=(-m "SCHED_OTHER"); other=(--rt -m "SCHED_FIFO") ;;
    pin) base=(-m "loads on any CPU"); other=(--load-cpus 1 -m "loads on CPU 1") ;;
    weight) base=(--load-cpu-weight 100 -m "loads at weight 100")
        other=(--load-cpu-weight 10 -m "loads at weight 10") ;;
    *) echo "significance.sh: -p takes nice, rt, pin or weight" >&2; exit 2 ;;
esac
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "significance.sh: -n takes a whole number >= 1" >&2; exit 2; }

cd "$(dirname "$0")/.."
cargo build --release -q
feelbench=$PWD/target/release/feelbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-6s %-9s %-28s %-28s %-28s\n' secs measured "mean (change verdict p)" "p99" "deadlines"
for secs in $durations; do
    common=(run --probe x --load burn -t "$secs" --repeat "$repeats" -q)
    for side in base other; do
        if [[ $side == base ]]; then settings=("${base[@]}"); else settings=("${other[@]}"); fi
        "$feelbench" "${common[@]}" "${settings[@]}" -o "$work/$side.json" >/dev/null 2>"$work/log" ||
            { cat "$work/log" >&2; exit 1; }
    done
    "$feelbench" compare "$work/base.json" "$work/other.json" --alpha "$alpha" --format json >"$work/cmp.json"
    python3 - "$work/cmp.json" "$secs" "$repeats" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
secs, repeats = float(sys.argv[2]), int(sys.argv[3])
cells = {}
for row in c["rows"]:
    cell = row["cells"][1] or {}
    p, change = cell.get("p"), cell.get("change")
    cells[row["figure"]] = "{} {} {}".format(
        "-" if change is None else "{:+.1f}".format(change),
        cell.get("verdict", "-"),
        "p=-" if p is None else "p={:.1g}".format(p),
    )
print("{:<6} {:<9} {:<28} {:<28} {:<28}".format(
    sys.argv[2], "{:g} s".format(2 * repeats * secs),
    cells.get("mean", "-"), cells.get("p99", "-"), cells.get("deadlines", "-")))
PY
done
