#!/usr/bin/env bash
# Benchmark, not a test: how often `feelbench ab` calls two arms that are
# the same setting different. Runs N experiments whose two arms (a, b) set
# nothing, with the A/A control (a again), and counts, over every scenario
# figure and the loads' work compared (b against a, and a-aa against a), the
# comparisons called better or worse after Benjamini-Hochberg at ALPHA, and
# those whose raw p-value is at or below ALPHA (what chance alone gives:
# about comparisons x ALPHA, fewer when the rounds are too few to reach it).
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-b BUILD] [-n EXPERIMENTS] [-r ROUNDS] [-t SECS] [-a ALPHA] [-w DIR] [-- RUN OPTIONS]
  -b BUILD   feelbench binary (default target/release/feelbench)
  -n N       experiments (default 20)
  -r ROUNDS  rounds per experiment (default 8)
  -t SECS    seconds per scenario (default 2)
  -a ALPHA   false discovery rate of the verdicts (default 0.05)
  -w DIR     where experiments are kept (default target/bench-ab-aa)
  RUN OPTIONS the selection (default --probe x,audio --load none,burn)
EOF
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench work=$PWD/target/bench-ab-aa
n=20 rounds=8 secs=2 alpha=0.05
while getopts ":b:n:r:t:a:w:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        n) n=$OPTARG ;;
        r) rounds=$OPTARG ;;
        t) secs=$OPTARG ;;
        a) alpha=$OPTARG ;;
        w) work=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ $# -gt 0 ]] || set -- --probe x,audio --load none,burn
source bench/ab_common.sh
mkdir -p "$work"
echo "A/A: $n experiments with $build, $rounds rounds, -t $secs, alpha $alpha, $*"
printf '%-4s %11s %7s %11s\n' exp comparisons called "raw p<=a"
tt=0 tc=0 tr=0
for i in $(seq "$n"); do
    experiment "$work/aa-$i" --arm a --arm b --rounds "$rounds" --seed "$i" -t "$secs" --alpha "$alpha" "$@"
    [[ -f $work/aa-$i/experiment.json ]] || continue
    read -r t c r < <(called "$work/aa-$i")
    printf '%-4s %11s %7s %11s\n' "$i" "$t" "$c" "$r"
    tt=$((tt + t)) tc=$((tc + c)) tr=$((tr + r))
done
python3 -c "import sys; t,c,r,a=map(float,sys.argv[1:]); print('total: %d comparisons, %d called different (%.2f %%), %d with raw p <= alpha (%.2f %%; chance: %.1f)' % (t, c, 100*c/max(t,1), r, 100*r/max(t,1), t*a))" "$tt" "$tc" "$tr" "$alpha"
