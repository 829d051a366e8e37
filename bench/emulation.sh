#!/usr/bin/env bash
# Benchmark, not a test: how exactly feelbench emulates CPU work. Runs the
# default probes (x, audio, video, gaming) under one load N times in a row and
# prints, per probe and run, "Desired CPU %" and the work ratio (CPU used by
# the frames that ran over the CPU they wanted). Goal on an idle machine
# (--load none): every Desired CPU % in 98-102 and every work ratio in
# 0.98-1.02, run after run.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-r RUNS] [-t SECS] [-l LOAD] [-b BINARY]... [-o DIR] [-h] [-- RUN_ARGS...]
  -r RUNS    runs in a row per binary (default 3)
  -t SECS    seconds measured per scenario (default 6: about 30 s per run)
  -l LOAD    the load of every run (default none)
  -b BINARY  a feelbench binary to measure; repeat -b to compare builds, which
             then take turns in each round (default: target/release/feelbench,
             built first)
  -o DIR     where the run documents and logs go (default
             target/bench/emulation/TIMESTAMP)
  -h         this help
RUN_ARGS are passed on to every 'feelbench run' (e.g. -- --recalibrate).
Prints Desired CPU % and work ratio per probe and run, the load average
before each run and the CPU other processes used while it measured; marks
figures outside 98-102 % and 0.98-1.02 when the load is none.
EOF
}

runs=3
secs=6
load=none
binaries=()
out=""
while getopts ":r:t:l:b:o:h" opt; do
    case $opt in
        r) runs=$OPTARG ;;
        t) secs=$OPTARG ;;
        l) load=$OPTARG ;;
        b) binaries+=("$(realpath "$OPTARG")") ;;
        o) out=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "emulation.sh: -r takes a whole number >= 1" >&2; exit 2; }

cd "$(dirname "$0")/.."
if ((${#binaries[@]} == 0)); then
    cargo build --release -q
    binaries=("$PWD/target/release/feelbench")
fi
out=${out:-target/bench/emulation/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
echo "emulation.sh: run documents and logs in $out" >&2

for ((run = 1; run <= runs; run++)); do
    for ((b = 0; b < ${#binaries[@]}; b++)); do
        name=$out/b$b-run$run
        cut -d' ' -f1 /proc/loadavg >"$name.loadavg"
        echo "== run $run/$runs, binary $b (${binaries[b]}), load $load, ${secs}s per probe," \
            "load average $(cat "$name.loadavg")" >&2
        "${binaries[b]}" run --probe x,audio,video,gaming --load "$load" -t "$secs" \
            -o "$name.json" "$@" >"$name.log" 2>&1 ||
            { cat "$name.log" >&2; exit 1; }
    done
done

python3 - "$out" "$runs" "$load" "${binaries[@]}" <<'PY'
import json, sys
out, runs, load, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
idle = load == "none"
probes = ["x", "audio", "video", "gaming"]

def mark(value, low, high):
    return " " if not idle or low <= value <= high else "!"

for b, binary in enumerate(binaries):
    docs = []
    for run in range(1, runs + 1):
        stem = f"{out}/b{b}-run{run}"
        docs.append((json.load(open(f"{stem}.json")), open(f"{stem}.loadavg").read().strip()))
    print(f"\n{binary}: load {load}, {runs} runs; Desired CPU % / work ratio"
          + ("  (! outside 98-102 / 0.98-1.02)" if idle else ""))
    print(f"{'probe':<8}" + "".join(f"{'run ' + str(r + 1):>22}" for r in range(runs)))
    desired, ratios = [], []
    for probe in probes:
        cells = []
        for doc, _ in docs:
            s = next((s for s in doc["scenarios"] if s["probe"] == probe), None)
            f = (s or {}).get("result", {}).get("figures", {}) if s else {}
            if "desired_cpu_pct" not in f or "work_ratio" not in f:
                cells.append(f"{'-':>22}")
                continue
            d, w = f["desired_cpu_pct"], f["work_ratio"]
            desired.append(d)
            ratios.append(w)
            cells.append(f"{d:>11.2f}{mark(d, 98, 102)}{w:>9.4f}{mark(w, 0.98, 1.02)}")
        print(f"{probe:<8}" + "".join(cells))
    loadavg = "".join(f"{l:>22}" for _, l in docs)
    print(f"{'loadavg':<8}{loadavg}")
    foreign = []
    for doc, _ in docs:
        pct = [s["telemetry"]["figures"].get("foreign", {}).get("cpu_pct")
               for s in doc["scenarios"] if s.get("telemetry")]
        pct = [p for p in pct if p is not None]
        foreign.append(f"{max(pct):.1f}" if pct else "-")
    print(f"{'others%':<8}" + "".join(f"{f:>22}" for f in foreign)
          + "   (largest CPU % other processes used during a scenario)")
    drift = sum(any(w["code"] == "calibration_drift" for w in doc["warnings"]) for doc, _ in docs)
    if desired:
        print(f"range: Desired CPU % {min(desired):.2f}-{max(desired):.2f}, "
              f"work ratio {min(ratios):.4f}-{max(ratios):.4f}; "
              f"calibration-drift warning in {drift} of {runs} runs")
PY
