#!/usr/bin/env bash
# Benchmark, not a test: each feelbench load's throughput against its usual
# stand-in, back to back on this machine, and the ratio feelbench/stand-in.
#   burn  vs stress-ng --cpu N      (CPU-seconds used per second)
#   write vs dd bs=1M to a file     (MB/s written, buffered)
#   read  vs dd iflag=direct        (MB/s read from the device)
#   spawn vs a shell loop per CPU   (spawns per second: each starts
#            running sh -c '/bin/true; :'    /bin/sh, which starts /bin/true, and
#                                    reaps it: the same work, like for like;
#                                    stress-ng --fork forks without exec, and
#                                    its exec stressor refuses root)
#   hack  vs hackbench              (messages per second)
#   cpuload vs stress-ng --cpu N+1 --cpu-method double
#                                   (CPU-seconds used per second)
#   list  vs find -printf '%s\n'    (entries per second; both walk the same
#                                    tree of sparse files, see make_tree, by
#                                    readdir and an lstat of each entry
#                                    relative to its directory, and neither
#                                    formats a long listing; ls -lR also
#                                    looks each entry's whole path up three
#                                    times, for its lstat and two extended
#                                    attributes)
#   ctar  vs tar cf in a loop       (files per second: each pass reads the
#                                    tree from the device - the page cache
#                                    dropped before each pass - and writes
#                                    the archive out)
#   xtar  vs tar xf in a loop       (files per second: extract into a fresh
#                                    directory, write it out (syncfs), remove
#                                    the previous copy; feelbench interleaves
#                                    the removal and starts each file's
#                                    write-back itself)
# dbench has no like-for-like stand-in: dbench replays a netbench trace whose
# operations (opens, closes, locks, ...) and sizes differ from the load's mix.
# Goal: ratio >= 0.9 for each. The feelbench probe during these runs is a
# 100 ms idle timer (custom, 0 % CPU), so the load has the machine to itself.
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-t SECS] [-r ROUNDS] [-l LOADS] [-h]
  -t SECS    seconds per measurement (default 10); needs about 33 GiB free here
  -r ROUNDS  rounds, the tools taking turns going first (default 3)
  -l LOADS   comma-separated loads to measure (default burn,write,read,spawn,hack,
             cpuload,list,ctar,xtar)
EOF2
}
secs=10
rounds=3
loads=burn,write,read,spawn,hack,cpuload,list,ctar,xtar
size=1G # feelbench's disk-load file size (write overrides it)
while getopts ":t:r:l:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        r) rounds=$OPTARG ;;
        l) loads=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "loads.sh: -t takes whole seconds >= 1" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "loads.sh: -r takes a whole number >= 1" >&2; exit 2; }
IFS=, read -ra chosen <<<"$loads"
for load in "${chosen[@]}"; do
    [[ $load =~ ^(burn|write|read|spawn|hack|cpuload|list|ctar|xtar)$ ]] || { echo "loads.sh: -l: unknown load '$load' (burn, write, read, spawn, hack, cpuload, list, ctar, xtar)" >&2; exit 2; }
done

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

# One function per tool and load, each printing one number.
fb_burn() { echo "$(fb burn cpu_pct -L "$cpus") / 100" | bc -l; }
sn_burn() { cpu_rate stress-ng --cpu "$cpus" -t "${secs}s"; }
# Both write buffered 1 MiB blocks into a file large enough not to wrap
# within the measurement.
fb_write() { size=16G fb write rate_per_s; }
sn_write() { io_mb_s wchar dd if=/dev/zero of="$tmp/ddw" bs=1M count=16384; rm -f "$tmp/ddw"; }
# dd reads one pass of a 16 GiB file (longer than the measurement);
# feelbench's read load cycles through its own file.
fb_read() { fb read device_read_mb_s; }
sn_read() { io_mb_s rchar dd if="$tmp/dd" of=/dev/null bs=1M iflag=direct; }
# Spawns per second: feelbench's load and, as its stand-in, one shell loop
# per CPU doing the same thing (start /bin/sh -c '/bin/true; :', wait for it),
# timed with $EPOCHREALTIME so the loop itself forks nothing else.
fb_spawn() { fb spawn rate_per_s; }
sn_spawn() {
    local i
    for ((i = 0; i < cpus; i++)); do
        (
            n=0
            end=$((${EPOCHREALTIME/./} + secs * 1000000))
            while ((${EPOCHREALTIME/./} < end)); do
                /bin/sh -c '/bin/true; :'
                n=$((n + 1))
            done
            echo "$n"
        ) >"$tmp/spawn.$i" &
    done
    wait
    cat "$tmp"/spawn.* | awk -v s="$secs" '{t += $1} END {print t / s}'
    rm -f "$tmp"/spawn.*
}
# Same geometry as the hack load (a group per CPU, 10 senders x 10
# receivers, 100-byte messages), hackbench's loops sized to about $secs s.
fb_hack() { fb hack rate_per_s | tee "$tmp/hack_rate"; }
sn_hack() {
    local rate loops hb_time
    rate=$(cat "$tmp/hack_rate" 2>/dev/null || echo 500000)
    loops=$(python3 -c "print(max(100, int($rate * $secs / ($cpus * 100))))")
    hb_time=$(hackbench -g "$cpus" -f 10 -s 100 -l "$loops" | awk '/^Time:/ {print $2}')
    python3 -c "print($cpus * 100 * $loops / $hb_time)"
}

# CPU pressure: resp1's Ncpu+1 floating-point processes.
fb_cpuload() { echo "$(fb cpuload cpu_pct) / 100" | bc -l; }
sn_cpuload() { cpu_rate stress-ng --cpu "$((cpus + 1))" --cpu-method double -t "${secs}s"; }

# make_tree DIR sparse|full: feelbench's source tree (load::tree) under
# DIR/src, the same layout and sizes (SplitMix64 draws): 4096 files in 256
# directories; sparse files have their size only, full ones random bytes.
make_tree() {
    python3 - "$@" <<'PY'
import os, sys
parent, content = sys.argv[1], sys.argv[2]
M = (1 << 64) - 1
state = 0x5EEDF11E
def draw():
    global state
    state = (state + 0x9E3779B97F4A7C15) & M
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def size():
    low = 256 << (draw() % 8)
    return low + draw() % low
files, dirs = 4096, 256
sizes = [size() for _ in range(files)]
data = os.urandom(65536)
paths = [os.path.join(parent, "src")]
for d in range(1, dirs):
    paths.append(os.path.join(paths[(d - 1) // 8], f"d{d}"))
for path in paths:
    os.makedirs(path)
for j, n in enumerate(sizes):
    with open(os.path.join(paths[j % dirs], f"f{j}.c"), "wb") as f:
        if content == "sparse":
            f.truncate(n)
        else:
            f.write(data[:n])
PY
}

# per_s N START_US: N (files or entries) per second since START_US
# ($EPOCHREALTIME without its dot).
per_s() { python3 -c "print($1 * 1e6 / (${EPOCHREALTIME/./} - $2))"; }

fb_list() { fb list rate_per_s; }
# A pass lists 4351 entries: every entry under src.
sn_list() {
    [[ -d $tmp/list/src ]] || make_tree "$tmp/list" sparse
    local n=0 start=${EPOCHREALTIME/./}
    while ((${EPOCHREALTIME/./} < start + secs * 1000000)); do
        find "$tmp/list/src" -mindepth 1 -printf '%s\n' >/dev/null
        n=$((n + 4351))
    done
    per_s "$n" "$start"
}
fb_ctar() { fb ctar rate_per_s; }
# Only tar's time counts: dropping the page cache (which also drops the
# directories' blocks, that the load keeps) is not part of the pass.
sn_ctar() {
    [[ -d $tmp/ctar/src ]] || { make_tree "$tmp/ctar" full && sync; }
    local n=0 busy=0 t0 end=$((${EPOCHREALTIME/./} + secs * 1000000))
    while ((${EPOCHREALTIME/./} < end)); do
        echo 1 >/proc/sys/vm/drop_caches
        t0=${EPOCHREALTIME/./}
        tar cf "$tmp/ctar.tar" -C "$tmp/ctar" src
        sync "$tmp/ctar.tar"
        busy=$((busy + ${EPOCHREALTIME/./} - t0))
        n=$((n + 4096))
    done
    python3 -c "print($n * 1e6 / $busy)"
    rm -f "$tmp/ctar.tar"
}
fb_xtar() { fb xtar rate_per_s; }
sn_xtar() {
    if [[ ! -f $tmp/xtar.tar ]]; then
        make_tree "$tmp/xsrc" full
        tar cf "$tmp/xtar.tar" -C "$tmp/xsrc" src
        rm -rf "$tmp/xsrc"
        sync
    fi
    local n=0 k=0 start=${EPOCHREALTIME/./}
    while ((${EPOCHREALTIME/./} < start + secs * 1000000)); do
        mkdir "$tmp/x$k"
        tar xf "$tmp/xtar.tar" -C "$tmp/x$k"
        sync -f "$tmp/x$k"
        rm -rf "$tmp/x$((1 - k))"
        k=$((1 - k))
        n=$((n + 4096))
    done
    per_s "$n" "$start"
    rm -rf "$tmp/x0" "$tmp/x1"
}

if [[ ,$loads, == *,read,* ]]; then
    echo "== making a 16 GiB file for dd to read" >&2
    dd if=/dev/zero of="$tmp/dd" bs=1M count=16384 conv=fdatasync status=none
fi

results=$tmp/results
for ((round = 1; round <= rounds; round++)); do
    for load in "${chosen[@]}"; do
        echo "== round $round/$rounds: $load (${secs}s per tool)" >&2
        if ((round % 2)); then
            f=$("fb_$load"); o=$("sn_$load")
        else
            o=$("sn_$load"); f=$("fb_$load")
        fi
        echo "$load $f $o" >>"$results"
    done
done

python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, fb, other = line.split()
    runs.setdefault(name, []).append((float(fb), float(other)))
units = {"burn": "CPU-s/s", "write": "MB/s", "read": "MB/s", "spawn": "spawn/s", "hack": "msg/s",
         "cpuload": "CPU-s/s", "list": "entry/s", "ctar": "file/s", "xtar": "file/s"}
print(f"median of {max(len(r) for r in runs.values())} rounds (tools alternate going first); goal >= 0.9")
print(f"{'load':<8}{'unit':<9}{'feelbench':>12}{'stand-in':>12}{'ratio':>8}  ratios per round")
for name, pairs in runs.items():
    fb = statistics.median(p[0] for p in pairs)
    other = statistics.median(p[1] for p in pairs)
    ratios = " ".join(f"{a / b:.2f}" for a, b in pairs)
    r = fb / other
    print(f"{name:<8}{units[name]:<9}{fb:>12.1f}{other:>12.1f}{r:>8.2f}  {ratios}  {'ok' if r >= 0.9 else 'BELOW GOAL'}")
PY
