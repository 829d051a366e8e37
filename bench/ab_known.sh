#!/usr/bin/env bash
# Benchmark, not a test: a known effect, the loads at nice 19 against nice
# 0, x under burn. One experiment of ROUNDS rounds (no A/A control); then,
# for each k from 2 rounds up, the sign-flip test of its first k rounds
# (as feelbench ab tests them: Wilcoxon's signed rank sum of the per-round
# differences, every sign flip tried; the shift shown is Hodges-Lehmann's)
# on x's overview figure and on burn's
# work, to find the rounds needed for a verdict at ALPHA (one comparison
# alone; an experiment of many figures needs its smallest p-value at
# ALPHA / comparisons).
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-b BUILD] [-r ROUNDS] [-t SECS] [-a ALPHA] [-w DIR]
  -b BUILD   feelbench binary (default target/release/feelbench)
  -r ROUNDS  rounds of the experiment (default 12)
  -t SECS    seconds per scenario (default 2)
  -a ALPHA   level of the test (default 0.01)
  -w DIR     where the experiment is kept (default target/bench-ab-known)
EOF
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench work=$PWD/target/bench-ab-known
rounds=12 secs=2 alpha=0.01
while getopts ":b:r:t:a:w:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        r) rounds=$OPTARG ;;
        t) secs=$OPTARG ;;
        a) alpha=$OPTARG ;;
        w) work=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
source bench/ab_common.sh
mkdir -p "$work"
echo "known effect: nice 19 against nice 0, x under burn, $rounds rounds, -t $secs, with $build"
experiment "$work/known" --probe x --load burn --no-aa --arm nice0:--load-nice=0 --arm nice19:--load-nice=19 \
    --rounds "$rounds" -t "$secs" --alpha "$alpha"
python3 - "$work/known/experiment.json" "$alpha" <<'PY'
import json, sys, itertools, statistics
e = json.load(open(sys.argv[1]))
alpha = float(sys.argv[2])

def hl(d):
    return statistics.median([(d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d))])

def signed_ranks(d):
    order = sorted(range(len(d)), key=lambda i: abs(d[i]))
    ranks = [0.0] * len(d)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return [r * ((x > 0) - (x < 0)) for r, x in zip(ranks, d)]

def p_value(d):
    r = signed_ranks(d)
    seen = abs(sum(r))
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        total += 1
        hits += abs(sum(s * x for s, x in zip(signs, r))) >= seen - 1e-9
    return hits / total

for s in e["analysis"]["scenarios"]:
    for f in s["figures"]:
        if not (f["overview"] or f["cost"]):
            continue
        base, other = f["values"][0], f["values"][1]
        pairs = [(b, o) for b, o in zip(base, other) if b is not None and o is not None]
        print("%s under %s, %s: %d rounds" % (s["probe"], s["load"], f["label"], len(pairs)))
        needed = None
        for k in range(2, len(pairs) + 1):
            d = [o - b for b, o in pairs[:k]]
            p = p_value(d)
            med = statistics.median(b for b, _ in pairs[:k])
            print("  first %2d rounds: shift %+.1f %% of the baseline, p = %.4f" % (k, 100 * hl(d) / med, p))
            if needed is None and p <= alpha:
                needed = k
        print("  rounds needed at alpha %g: %s" % (alpha, needed if needed else "more than %d" % len(pairs)))
PY
