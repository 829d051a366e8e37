#!/usr/bin/env bash
# Does the clock the frames' work reads change the latency the periodic
# probes measure? The x, audio, video and gaming probes under burn, ROUNDS
# rounds (4 unless told) of SECONDS (5) each, by turns (each round in the
# other order) with this tree's feelbench, `this` (work done to the thread's
# perf task clock, measure::work), and with the one of git revision BEFORE,
# `before` (default 0b363a8, whose work read CLOCK_THREAD_CPUTIME_ID), built
# in a temporary worktree: latency p50, mean and p99 per probe and run, then
# the medians of each.
#   [ROUNDS=N] [BEFORE=REV] bench/work_clock.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
FB_GIVEN=${FB:-}
FB=${FB:-$repo/target/release/feelbench}
secs=${1:-5}
rounds=${ROUNDS:-4}
before=${BEFORE:-0b363a8}
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/before" 2>/dev/null || true; git -C "$repo" worktree prune; rm -rf "$work"' EXIT
if [ -z "${FB_GIVEN:-}" ]; then
    echo "== building this tree (release)" >&2
    cargo build -q --release --manifest-path "$repo/Cargo.toml" >&2
fi
echo "== building $before in a temporary worktree (release)" >&2
git -C "$repo" worktree add -q --detach "$work/before" "$before"
cargo build -q --release --manifest-path "$work/before/Cargo.toml" >&2
declare -A binary=([this]="$FB" [before]="$work/before/target/release/feelbench")
for round in $(seq 1 "$rounds"); do
    order=(before this); [ $((round % 2)) = 0 ] && order=(this before)
    for mode in "${order[@]}"; do
        "${binary[$mode]}" run --probe x,audio,video,gaming --load burn -t "$secs" \
            -q --no-store -o "$work/run.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
        python3 - "$work/run.json" "$mode" >> "$work/results" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    f = s["result"]["figures"]
    print(s["probe"], sys.argv[2], *(f[k] / 1000 for k in ("latency_p50_us", "latency_mean_us", "latency_p99_us")))
PY
        tail -4 "$work/results"
    done
done
python3 "$here/medians.py" "$work/results" 2 "latency p50 (ms)" "mean (ms)" "p99 (ms)"
