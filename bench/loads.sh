#!/usr/bin/env bash
# Benchmark, not a test: each feelbench load's throughput against its usual
# stand-in, back to back on this machine, and the ratio feelbench/stand-in.
#   burn  vs stress-ng --cpu N      (CPU-seconds used per second)
#   write vs dd bs=1M to a file     (MB/s written, buffered)
#   read  vs dd iflag=direct        (MB/s read from the device)
#   spawn vs stress-ng --fork       (processes created per second: a spawn
#                                    is sh plus the /bin/true it starts, 2;
#                                    stress-ng's exec stressor refuses root)
#   hack  vs hackbench              (messages per second)
# Goal: ratio >= 0.9 for each. The feelbench probe during these runs is a
# 100 ms idle timer (custom, 0 % CPU), so the load has the machine to itself.
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-t SECS] [-h]
  -t SECS  seconds per measurement (default 10); needs about 17 GiB free here
EOF2
}
secs=10
size=1G # feelbench's disk-load file size (write overrides it)
while getopts ":t:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
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

# fb LOAD FIELD [feelbench options...]: runs LOAD for $secs (files of
# $size) and prints a field of its load_work (rate_per_s, cpu_pct, ...).
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

# io_mb_s FIELD CMD...: MB/s of CMD's /proc/PID/io FIELD (wchar: bytes
# written by its system calls, rchar: read) over $secs, after the same 0.6 s
# start as feelbench's loads get (warm-up + probe start), so a first burst
# into free page cache counts for neither tool.
io_mb_s() {
    python3 - "$secs" "$@" <<'PY'
import subprocess, sys, time
secs, field, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def bytes_so_far():
    for line in open(f"/proc/{p.pid}/io"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
time.sleep(0.6)
a, t0 = bytes_so_far(), time.monotonic()
time.sleep(secs)
b, t1 = bytes_so_far(), time.monotonic()
p.kill()
p.wait()
print((b - a) / (t1 - t0) / 1e6)
PY
}

results=$tmp/results
row() { echo "$1 $2 $3" >>"$results"; } # name feelbench stand-in

echo "== burn vs stress-ng --cpu $cpus (${secs}s each)" >&2
row "burn(CPU-s/s)" "$(echo "$(fb burn cpu_pct -L "$cpus") / 100" | bc -l)" "$(cpu_rate stress-ng --cpu "$cpus" -t "${secs}s")"

echo "== write vs dd (${secs}s each, streaming into a fresh 16 GiB file)" >&2
# Both write buffered 1 MiB blocks into a file large enough not to wrap
# within the measurement.
row "write(MB/s)" "$(size=16G fb write rate_per_s)" \
    "$(io_mb_s wchar dd if=/dev/zero of="$tmp/dd" bs=1M count=16384)"
# Completed to 16 GiB on disk for the read test.
dd if=/dev/zero of="$tmp/dd" bs=1M count=16384 conv=notrunc,fdatasync status=none

echo "== read vs dd iflag=direct (${secs}s each)" >&2
# dd reads one pass of the 16 GiB file the write test left (longer than the
# measurement); feelbench's read load cycles through its own file.
row "read(MB/s)" "$(fb read device_read_mb_s)" \
    "$(io_mb_s rchar dd if="$tmp/dd" of=/dev/null bs=1M iflag=direct)"
rm -f "$tmp/dd"

echo "== spawn vs stress-ng --fork $cpus (${secs}s each)" >&2
row "spawn(proc/s)" "$(echo "2 * $(fb spawn rate_per_s)" | bc -l)" "$(stress_rate fork)"

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
