#!/usr/bin/env bash
# Benchmark, not a test: each feelbench load's throughput against its usual
# stand-in, back to back on this machine, and the ratio feelbench/stand-in.
#   burn  vs stress-ng --cpu N      (CPU-seconds used per second)
#   write vs dd bs=1M to a file     (MB/s written, buffered)
#   read  vs dd iflag=direct        (MB/s read from the device)
#   spawn vs stress-ng --fork / --exec  (processes per second)
#   hack  vs hackbench              (messages per second)
# Goal: ratio >= 0.9 for each. The feelbench probe during these runs is a
# 100 ms idle timer (custom, 0 % CPU), so the load has the machine to itself.
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-t SECS] [-s SIZE] [-h]
  -t SECS  seconds per measurement (default 10)
  -s SIZE  file size for write/read, e.g. 2G (default 2G)
EOF2
}
secs=10
size=2G
while getopts ":t:s:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        s) size=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "loads.sh: -t takes whole seconds >= 1" >&2; exit 2; }

need=()
command -v stress-ng >/dev/null || need+=(stress-ng)
command -v hackbench >/dev/null || need+=(rt-tests)
if ((${#need[@]})); then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

cd "$(dirname "$0")/.."
cargo build --release -q
feelbench=$PWD/target/release/feelbench
cpus=$(nproc)
tmp=$(mktemp -d -p "$PWD" .loads-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fb LOAD FIELD [feelbench options...]: runs LOAD for $secs and prints a
# field of its load_work (rate_per_s, cpu_pct, device_read_mb_s, ...).
fb() {
    local load=$1 field=$2
    shift 2
    "$feelbench" run --probe custom -C 0 -I 100000 --load "$load" -t "$secs" --warmup 0.5 \
        --workdir "$tmp" --file-size "$size" -q -o "$tmp/fb.json" "$@" >/dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['scenarios'][0]['load_work'][0][sys.argv[2]])" \
        "$tmp/fb.json" "$field"
}

# cpu_rate CMD...: CPU-seconds per second used by CMD and its children.
cpu_rate() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print((r.ru_utime + r.ru_stime) / wall)
PY
}

# stress_rate STRESSOR: bogo ops per second of `stress-ng --STRESSOR cpus`.
stress_rate() {
    stress-ng --"$1" "$cpus" -t "${secs}s" --metrics-brief --yaml "$tmp/sng.yaml" >/dev/null 2>&1
    python3 - "$tmp/sng.yaml" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"stressor: " + sys.argv[2] + r"\n(?:.*\n)*?\s+bogo-ops-per-second-real-time: ([0-9.e+]+)", text)
print(m.group(1))
PY
}

# dd_mb_s ARGS...: the MB/s dd reports, stopped by SIGINT after $secs.
dd_mb_s() {
    { LC_ALL=C timeout -s INT "$secs" dd "$@" 2>&1 >/dev/null || true; } | python3 -c "
import re, sys
m = re.search(r'(\d+) bytes.*copied, ([0-9.]+) s', sys.stdin.read())
print(int(m.group(1)) / float(m.group(2)) / 1e6)"
}

results=$tmp/results
row() { echo "$1 $2 $3" >>"$results"; } # name feelbench stand-in

echo "== burn vs stress-ng --cpu $cpus (${secs}s each)" >&2
row "burn(CPU-s/s)" "$(echo "$(fb burn cpu_pct -L "$cpus") / 100" | bc -l)" "$(cpu_rate stress-ng --cpu "$cpus" -t "${secs}s")"

echo "== write vs dd (${secs}s each)" >&2
blocks=$(( $(numfmt --from=iec "$size") >> 20 ))
row "write(MB/s)" "$(fb write rate_per_s)" "$(dd_mb_s if=/dev/zero of="$tmp/dd" bs=1M count="$blocks")"

echo "== read vs dd iflag=direct (${secs}s each)" >&2
row "read(MB/s)" "$(fb read device_read_mb_s)" "$(dd_mb_s if="$tmp/dd" of=/dev/null bs=1M iflag=direct)"
rm -f "$tmp/dd"

echo "== spawn vs stress-ng --fork / --exec $cpus (${secs}s each)" >&2
spawn=$(fb spawn rate_per_s)
row "spawn/fork(1/s)" "$spawn" "$(stress_rate fork)"
row "spawn/exec(1/s)" "$spawn" "$(stress_rate exec)"

echo "== hack vs hackbench -g $cpus -f 10 -s 100 (about ${secs}s each)" >&2
hack=$(fb hack rate_per_s)
# Same geometry as the hack load (a group per CPU, 10 senders x 10 receivers,
# 100-byte messages); loops chosen so hackbench also runs about $secs s.
loops=$(python3 -c "print(max(100, int($hack * $secs / ($cpus * 100))))")
hb_time=$(hackbench -g "$cpus" -f 10 -s 100 -l "$loops" | awk '/^Time:/ {print $2}')
row "hack(msg/s)" "$hack" "$(python3 -c "print($cpus * 100 * $loops / $hb_time)")"

python3 - "$results" <<'PY'
import sys
print(f"{'load':<22}{'feelbench':>12}{'stand-in':>12}{'ratio':>8}  goal >= 0.9")
for line in open(sys.argv[1]):
    name, fb, other = line.split()
    fb, other = float(fb), float(other)
    r = fb / other if other else float("nan")
    print(f"{name:<22}{fb:>12.1f}{other:>12.1f}{r:>8.2f}  {'ok' if r >= 0.9 else 'BELOW GOAL'}")
PY
