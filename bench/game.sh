#!/usr/bin/env bash
# Benchmark, not a test: the `game` probe's frame pacing under none, burn and
# hack. Per refresh rate and load: average FPS, both 1 % lows, the 0.1 % low,
# stutters per 1 000 frames, % of frames that missed their refresh, the
# input-to-present p99, % of audio periods missed, which link of the
# critical path made the missed frames late (main, workers, render,
# present) with the dominant cause of their delay, desired CPU % and the
# work ratio (at idle: does the game get the CPU it wants?). Prints the load
# average before each run, as the figures move with what else runs. Run
# documents go to target/bench/game/TIMESTAMP (or -o DIR).
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-b BUILD] [-t SECS] [-r HZ,...] [-l LOADS] [-o DIR]
  -b BUILD  feelbench binary (default target/release/feelbench)
  -t SECS   seconds per scenario (default 10)
  -r HZ     refresh rates, comma-separated (default 60,144)
  -l LOADS  loads (default none,burn,hack)
  -o DIR    where the run documents go (default target/bench/game/TIMESTAMP)
EOF
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench secs=10 rates=60,144 loads=none,burn,hack
out=$PWD/target/bench/game/$(date -u +%Y%m%d-%H%M%S)
while getopts ":b:t:r:l:o:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        t) secs=$OPTARG ;;
        r) rates=$OPTARG ;;
        l) loads=$OPTARG ;;
        o) out=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ -x $build ]] || { echo "no binary at $build (cargo build --release)" >&2; exit 2; }
mkdir -p "$out"

for hz in ${rates//,/ }; do
    echo "== ${hz} Hz, ${secs} s per load; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    doc=$out/game-${hz}.json
    "$build" run --probe game --load "$loads" -t "$secs" --game-refresh "$hz" -q -o "$doc" \
        >"$out/game-${hz}.txt" 2>&1
    python3 - "$doc" <<'EOF'
import json, sys

run = json.load(open(sys.argv[1]))
print(f"{'load':<6} {'FPS':>6} {'1%p99':>6} {'1%avg':>6} {'.1%avg':>6} {'stut/1k':>7} "
      f"{'miss%':>6} {'in p99':>7} {'aud%':>5} {'main/workers/render/present %':>30} "
      f"{'cause of the late frames':<28} {'desired':>7} {'ratio':>6}")
for s in run["scenarios"]:
    r = s["result"]
    f = r["figures"]
    g = lambda k, d=1: f"{f[k]:.{d}f}" if k in f else "-"
    links = "/".join(g(f"late_{l}_pct", 0) for l in ("main", "workers", "render", "present"))
    late = r.get("late") or {}
    counts = (late.get("tally") or {}).get("counts", {})
    causes = sorted(((v, k[: -len(".count")]) for k, v in counts.items()
                     if k.endswith(".count") and v > 0), reverse=True)
    total = counts.get("late", 0)
    cause = ", ".join(f"{k} {100 * v / total:.0f}%" for v, k in causes[:2]) if total else "-"
    inp = f"{f['input_to_present_p99_us'] / 1e3:.1f}" if "input_to_present_p99_us" in f else "-"
    print(f"{s['load']:<6} {g('fps'):>6} {g('low_1pct_p99_fps'):>6} {g('low_1pct_mean_fps'):>6} "
          f"{g('low_01pct_mean_fps'):>6} {g('stutters_per_1k'):>7} {g('missed_refresh_pct'):>6} "
          f"{inp:>7} {g('audio_missed_pct'):>5} {links:>30} {cause:<28} "
          f"{g('desired_cpu_pct'):>7} {g('work_ratio', 3):>6}")
EOF
done
echo "run documents: $out"
