#!/usr/bin/env bash
# Does `feelbench regressions` find a real change at the right run, and
# nothing in noise? Makes, in DIR (default: a new temporary directory):
#   inj.sqlite    20 runs of x under burn, 2 s: 1-10 with the loads at
#                 nice 19, 11-20 at nice 0 (searched with --any-series, as
#                 the loads' nice is a setting and splits the series);
#   noise.sqlite  20 runs of one setting.
# Then prints what regressions finds in each. Run it on a quiet machine (a
# compiler beside it is a real change too, and is found). About 3 minutes.
set -euo pipefail
FB=${FB:-$(dirname "$0")/../target/release/feelbench}
DIR=${1:-$(mktemp -d)}
cd "$DIR"
for i in $(seq -w 1 20); do
    nice=$([ "$i" -le 10 ] && echo 19 || echo 0)
    "$FB" run --probe x --load burn -t 2 -N "$nice" -q -o "inj-$i.json" \
        --store inj.sqlite -m "inj $i nice $nice" >/dev/null 2>>runs.err
done
for i in $(seq -w 1 20); do
    "$FB" run --probe x --load burn -t 2 -q -o "noise-$i.json" \
        --store noise.sqlite -m "noise $i" >/dev/null 2>>runs.err
done
echo "== nice 19 then nice 0 (the 11th run is $(grep -o '"id": "[^"]*"' inj-11.json))"
"$FB" regressions --store inj.sqlite --any-series || true
echo "== one setting"
"$FB" regressions --store noise.sqlite || true
echo "runs and stores in $DIR; warnings of the runs in $DIR/runs.err"
