#!/usr/bin/env bash
# Benchmark, not a test: how often `feelbench compare` calls two runs of one
# setting different (a false alarm), and whether it still calls a real
# difference. `runs` makes R default runs of one setting back to back, each
# into its own file and into one store (so they form a series), and K runs of
# x and audio under burn with the loads at nice 0 and K at nice 19, taking
# turns, into a second store. `count BUILD...` then compares, with each build,
# runs 1 and 2, 2 and 3, ... of the default setting (those made) and each
# nice-0 run with the nice-19 run made after it, and counts the marked
# (better/worse) cells and "Why late" rows against the cells tested, and what
# --fail-on worse says.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") runs [-b BUILD] [-t SECS] [-r RUNS] [-k PAIRS] [-w DIR]
       $(basename "$0") count [-a ALPHA] [-w DIR] BUILD...
  runs    make the runs with BUILD (default target/release/feelbench):
          -t SECS measured per scenario (default 2), -r default runs (default 10),
          -k nice-0/nice-19 pairs (default 5)
  count   compare the pairs with each BUILD at -a ALPHA (default 0.01); a build
          that reads a store finds the runs' own (FEELBENCH_STORE is set)
  -w DIR  where runs and stores are kept (default target/bench-ab-null)
Prints per build and pair: cells tested, cells marked, late rows tested and
marked, and whether --fail-on worse failed; then the totals and what chance
alone predicts (tests x alpha).
EOF
}

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
what=$1; shift
cd "$(dirname "$0")/.."
work=$PWD/target/bench-ab-null
build=$PWD/target/release/feelbench
secs=2 runs=10 pairs=5 alpha=0.01
while getopts ":b:t:r:k:a:w:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        t) secs=$OPTARG ;;
        r) runs=$OPTARG ;;
        k) pairs=$OPTARG ;;
        a) alpha=$OPTARG ;;
        w) work=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

# One run with the build, its own XDG_DATA_HOME, into the store $1; a run
# whose file is there already is kept (runs adds to a set made before).
run() {
    local store=$1 out=$2; shift 2
    [[ -f $out ]] && return
    (cd "$work" && XDG_DATA_HOME=$work/xdg FEELBENCH_STORE=$store "$build" run -q -t "$secs" "$@" -o "$out" \
        >"$out.out" 2>"$out.log") || { echo "run $out failed:" >&2; tail -5 "$out.log" >&2; }
}

make_runs() {
    mkdir -p "$work/xdg"
    echo "runs with $build, -t $secs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    for i in $(seq "$pairs"); do
        run "$work/nice.sqlite" "$work/nice0-$i.json" --probe x,audio --load burn -N 0 -m "loads nice 0"
        run "$work/nice.sqlite" "$work/nice19-$i.json" --probe x,audio --load burn -N 19 -m "loads nice 19"
        echo "$(date -u +%T) nice pair $i done"
    done
    for i in $(seq "$runs"); do
        run "$work/default.sqlite" "$work/default-$i.json" -m "default $i"
        echo "$(date -u +%T) default run $i done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    done
}

# compare BUILD STORE A B: prints "cells marked late_tested late_marked fail"
# for one pair.
count_pair() {
    local bin=$1 store=$2 a=$3 b=$4 status=0
    XDG_DATA_HOME=$work/xdg FEELBENCH_STORE=$store "$bin" compare "$a" "$b" --alpha "$alpha" \
        --format json --fail-on worse -o "$work/cmp.json" 2>"$work/cmp.log" || status=$?
    [[ $status == 0 || $status == 3 ]] || { cat "$work/cmp.log" >&2; exit 1; }
    python3 - "$work/cmp.json" "$status" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
cells = [r["cells"][1] for r in c["rows"] if r["cells"][1]]
tested = [x for x in cells if x.get("p") is not None]
marked = [x for x in tested if x["verdict"] in ("better", "worse")]
late = [r["cells"][1] for r in c.get("late", []) if r["cells"][1]]
late_tested = [x for x in late if x.get("p") is not None]
late_marked = [x for x in late_tested if x["verdict"] in ("better", "worse")]
sources = {}
for x in marked:
    s = x.get("spread", "-")
    sources[s] = sources.get(s, 0) + 1
print(len(tested), len(marked), len(late_tested), len(late_marked),
      "fail" if sys.argv[2] == "3" else "pass",
      ",".join("{}:{}".format(k, v) for k, v in sorted(sources.items())) or "-")
PY
}

count() {
    [[ $# -ge 1 ]] || { usage >&2; exit 2; }
    for bin in "$@"; do
        echo "build $bin, alpha $alpha"
        printf '%-22s %7s %7s %6s %6s %5s  %s\n' pair tested marked late_t late_m gate "marked by spread"
        local tt=0 tm=0 lt=0 lm=0 fails=0 n=0
        pair_list=()
        for ((i = 1; i + 1 <= runs; i++)); do
            pair_list+=("default.sqlite default-$i.json default-$((i + 1)).json")
        done
        for i in $(seq "$pairs"); do
            pair_list+=("nice.sqlite nice0-$i.json nice19-$i.json")
        done
        for p in "${pair_list[@]}"; do
            read -r store a b <<<"$p"
            [[ -f $work/$a && -f $work/$b ]] || continue
            read -r t m l_t l_m gate sources < <(count_pair "$bin" "$work/$store" "$work/$a" "$work/$b")
            printf '%-22s %7s %7s %6s %6s %5s  %s\n' "${a%.json}/${b%.json}" "$t" "$m" "$l_t" "$l_m" "$gate" "$sources"
            if [[ $a == default-* ]]; then
                tt=$((tt + t)) tm=$((tm + m)) lt=$((lt + l_t)) lm=$((lm + l_m)) n=$((n + 1))
                [[ $gate == fail ]] && fails=$((fails + 1))
            fi
        done
        python3 -c "import sys; t,m,lt,lm,f,n,a=map(float,sys.argv[1:]); print('default pairs: %d; cells %d of %d marked (chance: %.1f); late rows %d of %d marked (chance: %.1f); --fail-on worse failed %d of %d' % (n, m, t, t*a, lm, lt, lt*a, f, n))" \
            "$tt" "$tm" "$lt" "$lm" "$fails" "$n" "$alpha"
        echo
    done
}

case $what in
    runs) make_runs ;;
    count) count "$@" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
