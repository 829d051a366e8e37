#!/usr/bin/env bash
# Benchmark, not a test: the time `feelbench ab` adds over its runs alone.
# For each of N trials: one experiment (arms a and b, b's loads at nice 19,
# the A/A control: 3 runs a round), timed whole; then the same runs made
# alone, one `feelbench run` after another with each run's own options (as
# the experiment gave them: its document's run_options), timed whole. The
# experiment's share of each is told apart from its document: each run's
# record counts its settings, its child and the wait for it; what is left
# of the experiment's wall time is its own start (the arms checked and
# rehearsed), the document written after each run, the analysis and the
# renderings. `ab report` then times the analysis and the rendering alone.
# The trials alternate which goes first, so a machine that drifts weighs
# on both alike.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-b BUILD] [-n TRIALS] [-r ROUNDS] [-t SECS] [-w DIR] [-- RUN OPTIONS]
  -b BUILD   feelbench binary (default target/release/feelbench)
  -n TRIALS  experiment-and-runs pairs (default 3)
  -r ROUNDS  rounds per experiment (default 4)
  -t SECS    seconds per scenario (default 1)
  -w DIR     where experiments and runs are kept (default target/bench-ab-overhead)
  RUN OPTIONS the selection (default --probe x --load none,burn)
EOF
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench work=$PWD/target/bench-ab-overhead
n=3 rounds=4 secs=1
while getopts ":b:n:r:t:w:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        n) n=$OPTARG ;;
        r) rounds=$OPTARG ;;
        t) secs=$OPTARG ;;
        w) work=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ $# -gt 0 ]] || set -- --probe x --load none,burn
rm -rf "$work"
mkdir -p "$work"

now() { date +%s.%N; }

# since START: the seconds from START (a `now`) to now.
since() { python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }

# experiment DIR: the experiment, timed; prints its seconds.
experiment() {
    local start
    start=$(now)
    "$build" ab -q --no-store -l 200000 --warmup 0.2 --noise-check 0 -t "$secs" \
        --rounds "$rounds" --seed 1 --dir "$1" --format json \
        --arm a --arm b:--load-nice=19 "${@:2}" >"$1.out" 2>"$1.log"
    since "$start"
}

# alone EXP DIR: each run of the experiment in EXP made again alone, in its
# order, into DIR; prints their seconds.
alone() {
    mkdir -p "$2"
    python3 - "$1/experiment.json" >"$2/commands" <<'PY'
import json, shlex, sys
e = json.load(open(sys.argv[1]))
for r in e["runs"]:
    options = e["arms"][e["slots"][r["slot"]]["arm"]]["run_options"]
    print(shlex.join(options + ["-q", "-o", "r%02d-%d.json" % (r["round"], r["slot"])]))
PY
    local start
    start=$(now)
    while read -r line; do
        eval "(cd $2 && \"$build\" run $line)" >/dev/null 2>>"$2/log"
    done <"$2/commands"
    since "$start"
}

echo "ab overhead: $n trials with $build, $rounds rounds of 3 runs, -t $secs, $*; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %9s %9s %9s %9s %9s %11s\n' trial runs exp_s alone_s added_s "runs_s" "report_s"
for i in $(seq "$n"); do
    if ((i % 2)); then
        e=$(experiment "$work/exp-$i" "$@")
        a=$(alone "$work/exp-$i" "$work/alone-$i")
    else
        # The runs alone first: the experiment's document they need comes
        # from the previous trial's (same arms, rounds and seed).
        a=$(alone "$work/exp-$((i - 1))" "$work/alone-$i")
        e=$(experiment "$work/exp-$i" "$@")
    fi
    start=$(now)
    "$build" ab report "$work/exp-$i" >/dev/null
    r=$(since "$start")
    python3 - "$work/exp-$i/experiment.json" "$i" "$e" "$a" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
i, e, a, r = sys.argv[2], *map(float, sys.argv[3:])
runs = len(d["runs"])
in_runs = sum(x["seconds"] for x in d["runs"])
print("%-6s %9d %9.2f %9.2f %9.2f %9.2f %11.3f" % (i, runs, e, a, e - a, in_runs, r))
print("       per run: added %.3f s; outside the runs' records %.3f s in all" % ((e - a) / runs, e - in_runs))
PY
done
echo "exp_s: the experiment's wall time; alone_s: its runs made alone; added_s: the difference;"
echo "runs_s: the runs' records in the experiment's document (each with its settings and its child);"
echo "report_s: ab report (the analysis and the table again from the directory)"
