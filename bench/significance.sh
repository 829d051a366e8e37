#!/usr/bin/env bash
# Benchmark, not a test: how much measuring `feelbench compare` needs before a
# known difference is called significant. Two settings are measured with the
# x probe under burn, with plain durations (-t) and with --precision goals;
# each pair is compared and the verdicts of mean latency, p99 and deadlines
# met are printed per try, then how many tries found each significant.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-p nice|rt|pin|weight] [-d "SECS ..."] [-P "PCT ..."] [-T SECS] [-M SECS]
                       [-n REPEATS] [-k TRIES] [-a ALPHA] [-h]
  -p PAIR     nice: loads at nice 0 (baseline) vs nice 19;
              rt:   probe SCHED_OTHER (baseline) vs --rt (SCHED_FIFO);
              pin:  loads on any CPU (baseline) vs --load-cpus 1;
              weight: --load-cpu-weight 100 (baseline) vs 10   (default nice)
  -d "SECS"   plain measured seconds per scenario to try, in order (default "0.5 1 2 4 8";
              "" for none)
  -P "PCT"    --precision goals to try after them (default none), each with -t from -T
              (default 2) and --max-time from -M (default feelbench's: 10 x -T)
  -n REPEATS  --repeat of each plain run (default 1: batch-means intervals)
  -k TRIES    pairs measured per setting, to see how often the verdict comes (default 1)
  -a ALPHA    significance level of compare (default 0.01)
  -h          this help
Prints, per try, each figure's change, verdict and p-value, and the seconds
measured per scenario (baseline/other: measurements x -t) and how many
measurements feelbench found disturbed by other processes, then per setting
how many of the tries found each figure significant and the mean seconds
measured per scenario. Needs root for --rt and weight. Logs and runs stay under
target/bench-significance/ (the last try's).
EOF
}

pair=nice
durations="0.5 1 2 4 8"
precisions=""
precision_t=2
max_time=""
repeats=1
tries=1
alpha=0.01
while getopts ":p:d:P:T:M:n:k:a:h" opt; do
    case $opt in
        p) pair=$OPTARG ;;
        d) durations=$OPTARG ;;
        P) precisions=$OPTARG ;;
        T) precision_t=$OPTARG ;;
        M) max_time=$OPTARG ;;
        n) repeats=$OPTARG ;;
        k) tries=$OPTARG ;;
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
for n in "$repeats" "$tries"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "significance.sh: -n and -k take a whole number >= 1" >&2; exit 2; }
done

cd "$(dirname "$0")/.."
cargo build --release -q
feelbench=$PWD/target/release/feelbench
work=$PWD/target/bench-significance
rm -rf "$work" && mkdir -p "$work"

# One try of `feelbench run` ARGS for both sides, then compare; prints the
# try's line and appends its verdicts to $work/tally.
try() {
    local label=$1; shift
    local side settings
    for side in base other; do
        if [[ $side == base ]]; then settings=("${base[@]}"); else settings=("${other[@]}"); fi
        "$feelbench" run --probe x --load burn -q "$@" "${settings[@]}" -o "$work/$side.json" \
            >"$work/$side.out" 2>"$work/$side.log" || { cat "$work/$side.log" >&2; exit 1; }
    done
    "$feelbench" compare "$work/base.json" "$work/other.json" --alpha "$alpha" --format json >"$work/cmp.json"
    python3 - "$work" "$label" <<'PY'
import json, sys
work, label = sys.argv[1], sys.argv[2]
c = json.load(open(work + "/cmp.json"))
def measurements(side):
    run = json.load(open("{}/{}.json".format(work, side)))
    s = run["scenarios"][0]
    return s.get("repeats") or [s], run["settings"]["duration_s"]
def disturbed(m):
    return bool(((m.get("telemetry") or {}).get("figures") or {}).get("disturbed"))
sides = [measurements(side) for side in ("base", "other")]
secs = [len(ms) * t for ms, t in sides]
noisy = sum(disturbed(m) for ms, _ in sides for m in ms)
cells, verdicts = {}, {}
for row in c["rows"]:
    cell = row["cells"][1] or {}
    p, change, verdict = cell.get("p"), cell.get("change"), cell.get("verdict", "-")
    verdicts[row["figure"]] = verdict in ("better", "worse")
    verdict = {"no_difference": "n.s.", "untested": "no-CI"}.get(verdict, verdict)
    cells[row["figure"]] = "{} {} {}".format(
        "-" if change is None else "{:+.1f}".format(change), verdict,
        "p=-" if p is None else "p={:.1g}".format(p))
print("{:<12} {:<11} {:<26} {:<26} {:<26} {}".format(
    label, "{:g}/{:g} s".format(*secs),
    cells.get("mean", "-"), cells.get("p99", "-"), cells.get("deadlines", "-"),
    "{} disturbed".format(noisy) if noisy else ""), flush=True)
with open(work + "/tally", "a") as f:
    f.write("{}\t{}\t{}\t{}\t{}\n".format(label, sum(secs) / 2,
        *(int(verdicts.get(k, False)) for k in ("mean", "p99", "deadlines"))))
PY
}

echo "x under burn, pair $pair, alpha $alpha; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %-11s %-26s %-26s %-26s\n' setting "measured" "mean (change verdict p)" "p99" "deadlines"
for secs in $durations; do
    for _ in $(seq "$tries"); do try "-t $secs" -t "$secs" --repeat "$repeats"; done
done
for pct in $precisions; do
    cap=()
    [[ -n $max_time ]] && cap=(--max-time "$max_time")
    for _ in $(seq "$tries"); do
        try "±$pct -t $precision_t" -t "$precision_t" --precision "$pct" "${cap[@]}"
    done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "significant in how many tries (mean seconds measured per scenario):"
python3 - "$work/tally" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    label, secs, *marks = line.rstrip("\n").split("\t")
    r = rows.setdefault(label, {"n": 0, "secs": 0.0, "marks": [0, 0, 0]})
    r["n"] += 1
    r["secs"] += float(secs)
    r["marks"] = [a + int(b) for a, b in zip(r["marks"], marks)]
print("{:<12} {:>9} {:>6} {:>6} {:>10}".format("setting", "measured", "mean", "p99", "deadlines"))
for label, r in rows.items():
    n = r["n"]
    print("{:<12} {:>7.1f} s {:>6} {:>6} {:>10}".format(
        label, r["secs"] / n, *("{}/{}".format(m, n) for m in r["marks"])))
PY
