#!/usr/bin/env bash
# Benchmark, not a test: what the per-event readings of the late split and
# `--explain` cost the 1 ms FIFO probe
# (`--probe custom -C 0 -I 1000 --rt`: a no-work task woken every 1 ms)
# under none, burn and hack (hack switches most: the recorder's worst
# case), in turns: without the readings (`--no-late-split`), with them
# (the default) and with them and `--explain`: the probe's latency
# p50/p99/max, the probe
# process's CPU (`result.usage`), and, with --explain, the recorder's
# status and its cost as predicted before the scenario and measured during
# it (`late.explain.cost`, % of one CPU; above 1 % it turns itself off).
# Needs root (--rt and --explain).
set -euo pipefail

secs=3
rounds=2
loads="none burn hack"
feelbench=
while getopts ":t:r:l:b:h" opt; do
    case $opt in
    t) secs=$OPTARG ;;
    r) rounds=$OPTARG ;;
    l) loads=$OPTARG ;;
    b) feelbench=$OPTARG ;;
    *) echo "usage: $(basename "$0") [-t SECS] [-r ROUNDS] [-l 'LOADS'] [-b BINARY]"; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$feelbench" ]; then
    cargo build --release -q --manifest-path "$root/Cargo.toml"
    feelbench=$root/target/release/feelbench
fi
out=$root/target/bench/explain_overhead/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
printf '%-6s %-8s %-5s %9s %9s %9s %10s %-10s %8s %8s %8s\n' \
    load mode round p50_us p99_us max_us probe_cpu status pred_% meas_% records
for round in $(seq 1 "$rounds"); do
    for load in $loads; do
        for mode in nosplit split explain; do
            run=$out/$load-$mode-$round.json
            case $mode in
            nosplit) flag=(--no-late-split) ;;
            split) flag=() ;;
            explain) flag=(--explain) ;;
            esac
            "$feelbench" run --probe custom -C 0 -I 1000 --rt --load "$load" -t "$secs" \
                --noise-check 0 -q "${flag[@]}" -o "$run" >"$out/$load-$mode-$round.log" 2>&1
            python3 - "$run" "$load" "$mode" "$round" <<'PY'
import json, sys
run, load, mode, round_ = sys.argv[1:5]
r = json.load(open(run))["scenarios"][0]["result"]
f = r["figures"]
usage = r.get("usage") or {}
cpu_ms = usage.get("user_cpu_ms", 0) + usage.get("system_cpu_ms", 0)
e = (r.get("late") or {}).get("explain")
if e:
    c = e["cost"]
    meas = c.get("measured_cpu_pct")
    tail = f"{e['status']:<10} {c['predicted_cpu_pct']:8.2f} {meas if meas is not None else float('nan'):8.2f} {c['records']:8d}"
else:
    tail = f"{'-':<10} {'-':>8} {'-':>8} {'-':>8}"
print(f"{load:<6} {mode:<8} {round_:<5} {f['latency_p50_us']:9.1f} {f['latency_p99_us']:9.1f} "
      f"{f['latency_max_us']:9.1f} {cpu_ms:8.1f}ms {tail}")
PY
        done
    done
done
echo "files: $out"
