#!/usr/bin/env bash
# Benchmark, not a test: how often `feelbench compare` calls the causes of
# late events different ("Why late" rows marked better/worse) between two
# runs of one setting (a false alarm). `runs` makes N pairs of short runs of
# one setting back to back (a-I.json then b-I.json). `count BUILD` compares
# each pair with BUILD twice: as the runs are, where each cause is tested
# over the runs' sub-windows ([s]), and with the counts per sub-window taken
# out of both documents, as a document made before they were kept reads,
# where each cause falls back to the two-proportion z test on the whole-run
# counts ([w]). Both use Holm's correction across the rows of a run.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") runs [-b BUILD] [-t SECS] [-n PAIRS] [-p PROBES] [-l LOADS] [-w DIR]
       $(basename "$0") count [-a ALPHA] [-w DIR] BUILD
  runs    make the pairs with BUILD (default target/release/feelbench):
          -t SECS measured per scenario (default 3), -n pairs (default 10),
          -p probes (default audio,x), -l loads (default burn,hack)
  count   compare each pair with BUILD at -a ALPHA (default 0.01)
  -w DIR  where the runs are kept (default target/bench-causes-null)
Prints per pair the "Why late" rows tested and marked, by spread, with the
counts per sub-window ([s]) and without ([w]); then the totals and what
chance alone predicts (rows tested x alpha).
EOF
}

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
what=$1; shift
cd "$(dirname "$0")/.."
work=$PWD/target/bench-causes-null
build=$PWD/target/release/feelbench
secs=3 pairs=10 probes=audio,x loads=burn,hack alpha=0.01
while getopts ":b:t:n:p:l:a:w:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        t) secs=$OPTARG ;;
        n) pairs=$OPTARG ;;
        p) probes=$OPTARG ;;
        l) loads=$OPTARG ;;
        a) alpha=$OPTARG ;;
        w) work=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
build=$(realpath -m "$build")

# One run with the build into $1, stored nowhere; a run whose file is there
# already is kept (runs adds to a set made before).
run() {
    local out=$1
    [[ -f $out ]] && return
    (cd "$work" && XDG_DATA_HOME=$work/xdg "$build" run -q --no-store -t "$secs" \
        --probe "$probes" --load "$loads" -o "$out" >"$out.out" 2>"$out.log") ||
        { echo "run $out failed:" >&2; tail -5 "$out.log" >&2; }
}

make_runs() {
    mkdir -p "$work/xdg"
    echo "runs with $build, --probe $probes --load $loads -t $secs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    for i in $(seq "$pairs"); do
        run "$work/a-$i.json"
        run "$work/b-$i.json"
        echo "$(date -u +%T) pair $i done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    done
}

# The document $1 without its counts per sub-window, written to $2.
without_sub_windows() {
    python3 - "$1" "$2" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for s in run["scenarios"]:
    for m in [s] + s.get("repeats", []):
        late = ((m or {}).get("result") or {}).get("late")
        if late:
            late.pop("batches", None)
json.dump(run, open(sys.argv[2], "w"))
PY
}

# compare BUILD A B: prints "tested marked by-spread" for the late rows.
count_pair() {
    local bin=$1 a=$2 b=$3
    XDG_DATA_HOME=$work/xdg "$bin" compare "$a" "$b" --alpha "$alpha" --no-history \
        --format json -o "$work/cmp.json" 2>"$work/cmp.log" || { cat "$work/cmp.log" >&2; exit 1; }
    python3 - "$work/cmp.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
late = [r["cells"][1] for r in c.get("late", []) if r["cells"][1]]
tested = [x for x in late if x.get("p") is not None]
marked = [x for x in tested if x["verdict"] in ("better", "worse")]
spreads = {}
for x in tested:
    s = x.get("spread", "-")
    spreads[s] = spreads.get(s, 0) + 1
print(len(tested), len(marked),
      ",".join("{}:{}".format(k, v) for k, v in sorted(spreads.items())) or "-")
PY
}

count() {
    [[ $# -eq 1 ]] || { usage >&2; exit 2; }
    local bin=$1 st=0 sm=0 wt=0 wm=0 n=0
    echo "build $bin, alpha $alpha"
    printf '%-8s %8s %8s %-22s %8s %8s %s\n' pair s_tested s_marked "tested by" w_tested w_marked "tested by"
    for i in $(seq "$pairs"); do
        local a=$work/a-$i.json b=$work/b-$i.json
        [[ -f $a && -f $b ]] || continue
        read -r t m by < <(count_pair "$bin" "$a" "$b")
        without_sub_windows "$a" "$work/a-$i.w.json"
        without_sub_windows "$b" "$work/b-$i.w.json"
        read -r t_w m_w by_w < <(count_pair "$bin" "$work/a-$i.w.json" "$work/b-$i.w.json")
        rm -f "$work/a-$i.w.json" "$work/b-$i.w.json"
        printf '%-8s %8s %8s %-22s %8s %8s %s\n' "$i" "$t" "$m" "$by" "$t_w" "$m_w" "$by_w"
        st=$((st + t)) sm=$((sm + m)) wt=$((wt + t_w)) wm=$((wm + m_w)) n=$((n + 1))
    done
    python3 -c "import sys; st,sm,wt,wm,n,a=map(float,sys.argv[1:]); print('pairs: %d; with counts per sub-window: %d of %d rows marked (chance: %.2f); whole-run counts only: %d of %d marked (chance: %.2f)' % (n, sm, st, st*a, wm, wt, wt*a))" \
        "$st" "$sm" "$wt" "$wm" "$n" "$alpha"
}

case $what in
    runs) make_runs ;;
    count) count "$@" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
