#!/usr/bin/env bash
# Benchmark, not a test: how much the x probe's p99 and deadlines met under
# burn vary from one run to the next. Runs the same scenario several times,
# prints each run's figures, and the coefficient of variation of each
# (sample SD over mean, in %).
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-t SECS] [-r RUNS] [-e "ARGS"] [-h]
  -t SECS    seconds measured per run (default 6, feelbench's default)
  -r RUNS    runs (default 5)
  -e "ARGS"  more arguments for feelbench run, e.g. "--precision 5" or "--rt"
  -h         this help
Prints each run's p99 (ms), deadlines met (%), seconds measured and the
measurements feelbench found disturbed by other processes, then
mean, SD and CV of p99 and deadlines. Goal: CV <= 10 %. Logs and runs stay
under target/bench-cv/.
EOF
}

secs=6
runs=5
extra=""
while getopts ":t:r:e:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        r) runs=$OPTARG ;;
        e) extra=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $runs =~ ^[0-9]+$ && $runs -ge 2 ]] || { echo "cv.sh: -r takes a whole number >= 2" >&2; exit 2; }
read -r -a extra_args <<<"$extra"

cd "$(dirname "$0")/.."
cargo build --release -q
feelbench=$PWD/target/release/feelbench
work=$PWD/target/bench-cv
rm -rf "$work" && mkdir -p "$work"

echo "x under burn, -t $secs ${extra}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
    "$feelbench" run --probe x --load burn -t "$secs" -q "${extra_args[@]}" -o "$work/run$i.json" \
        >"$work/run$i.out" 2>"$work/run$i.log" || { cat "$work/run$i.log" >&2; exit 1; }
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
p99s, deadlines = [], []
print("{:<5} {:>9} {:>12} {:>9}".format("run", "p99 (ms)", "deadlines %", "measured"))
for i in range(1, runs + 1):
    run = json.load(open("{}/run{}.json".format(work, i)))
    s = run["scenarios"][0]
    figures = s["result"]["figures"]
    p99s.append(figures["latency_p99_us"] / 1e3)
    deadlines.append(figures["deadlines_met_pct"])
    each = s.get("repeats") or [s]
    measured = len(each) * run["settings"]["duration_s"]
    noisy = sum(bool(((m.get("telemetry") or {}).get("figures") or {}).get("disturbed")) for m in each)
    print("{:<5} {:>9.3f} {:>12.1f} {:>7g} s {}".format(
        i, p99s[-1], deadlines[-1], measured, "{} disturbed".format(noisy) if noisy else ""))
for name, values in (("p99", p99s), ("deadlines", deadlines)):
    mean, sd = statistics.mean(values), statistics.stdev(values)
    print("{:<10} mean {:.3f}  SD {:.3f}  CV {:.1f} %".format(name, mean, sd, 100 * sd / mean))
PY
