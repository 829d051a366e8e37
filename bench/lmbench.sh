#!/usr/bin/env bash
# Benchmark, not a test: feelbench's `--micro-mode lmbench` against the real
# LMbench on this machine, everything on CPU 0, in alternating rounds: each
# round runs LMbench's lat_* programs one after the other, then
# `feelbench run --probe micro --micro-mode lmbench --load none`. Prints per
# operation the median over the rounds of each and feelbench / LMbench, with
# the load average before and after. LMbench is not shipped with feelbench:
# give the directory of its built lat_* programs (lat_proc, lat_ctx,
# lat_pipe, lat_unix, lat_udp, lat_tcp, lat_connect, lat_fs, lat_mmap,
# lat_pagefault) and of its hello (lat_proc execs /tmp/hello, as LMbench's
# own scripts copy it there). README, "micro", says how the operations
# differ; bench/README.md how to build LMbench for this script.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") -l DIR [-t SECS] [-r ROUNDS] [-e USECS] [-p PRIO] [-b BINARY] [-h]
  -l DIR     the directory of LMbench's built lat_* programs and hello
  -t SECS    seconds of each feelbench run (default 10)
  -r ROUNDS  rounds, each LMbench then feelbench (default 3)
  -e USECS   LMbench's timing interval, its ENOUGH (default 5000, the least
             it chooses; on a busy machine it finds none stable and takes 1 s)
  -p PRIO    run both under SCHED_RR at PRIO (root): on a machine busy with
             other work, its tasks then do not run on CPU 0 between their
             operations (at nice -19 they still did: LMbench's pipe round
             trip took 17 us there, 6 us under SCHED_RR). Not SCHED_FIFO:
             LMbench's harness then starves its own parent and spins.
  -b BINARY  the feelbench to run (default: target/release/feelbench, built)
  -h         this help
EOF
}

lmbench=
secs=10
rounds=3
enough=5000
rr=
feelbench=
while getopts ":l:t:r:e:p:b:h" opt; do
    case $opt in
        l) lmbench=$OPTARG ;;
        t) secs=$OPTARG ;;
        r) rounds=$OPTARG ;;
        e) enough=$OPTARG ;;
        p) rr=$OPTARG ;;
        b) feelbench=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ -n $lmbench ]] || { echo "lmbench.sh: give LMbench's lat_* directory with -l" >&2; usage >&2; exit 2; }
for n in "$secs" "$rounds" "$enough"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "lmbench.sh: -t, -r and -e take whole numbers >= 1" >&2; exit 2; }
done
[[ -z $rr || $rr =~ ^[1-9][0-9]?$ ]] || { echo "lmbench.sh: -p takes a priority 1-99" >&2; exit 2; }
policy=()
[[ -n $rr ]] && policy=(chrt -r "$rr")
for prog in hello lat_proc lat_ctx lat_pipe lat_unix lat_udp lat_tcp lat_connect lat_fs lat_mmap lat_pagefault; do
    [[ -x $lmbench/$prog ]] || { echo "lmbench.sh: $lmbench/$prog is missing" >&2; exit 1; }
done
lmbench=$(cd "$lmbench" && pwd)

cd "$(dirname "$0")/.."
if [[ -z $feelbench ]]; then
    cargo build --release
    feelbench=target/release/feelbench
fi
out=target/bench/lmbench/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "lmbench.sh: writing to $out" >&2
# lat_fs's directories and the mapped files, on the file system of the
# probe's directory (the working directory's); removed however it ends.
scratch=$out/scratch
mkdir -p "$scratch"
had_hello=false
[[ -e /tmp/hello ]] && had_hello=true
# On any end: the servers stopped (each ignores a stop when it is not
# running), the scratch files and LMbench's hello removed.
cleanup() {
    for server in lat_udp lat_tcp lat_connect; do
        timeout 5 "$lmbench/$server" -S 127.0.0.1 >/dev/null 2>&1 || true
    done
    rm -rf "$scratch"
    $had_hello || rm -f /tmp/hello
}
trap cleanup EXIT
cp "$lmbench/hello" /tmp/hello
# lat_mmap and lat_pagefault map a file of 1 MiB, as the probe does.
head -c $((1 << 20)) /dev/zero >"$scratch/mapped"
uptime >"$out/uptime-before.txt"

# Each LMbench program is stopped after 2 minutes, should it ever spin.
on_cpu0() { ENOUGH=$enough timeout 120 "${policy[@]}" taskset -c 0 "$@"; }

# LMbench's programs, each printing its result on stderr.
lmbench_round() {
    local log=$1
    {
        for what in fork exec shell; do on_cpu0 "$lmbench/lat_proc" "$what"; done
        on_cpu0 "$lmbench/lat_ctx" -s 0 2
        on_cpu0 "$lmbench/lat_ctx" -s 64 2
        on_cpu0 "$lmbench/lat_pipe"
        on_cpu0 "$lmbench/lat_unix"
        for server in lat_udp lat_tcp lat_connect; do
            on_cpu0 "$lmbench/$server" -s
            sleep 0.2
            on_cpu0 "$lmbench/$server" 127.0.0.1
            on_cpu0 "$lmbench/$server" -S 127.0.0.1
        done
        on_cpu0 "$lmbench/lat_fs" "$scratch"
        on_cpu0 "$lmbench/lat_mmap" 1m "$scratch/mapped"
        on_cpu0 "$lmbench/lat_pagefault" "$scratch/mapped"
    } >"$log" 2>&1
}

for round in $(seq "$rounds"); do
    echo "lmbench.sh: round $round of $rounds" >&2
    lmbench_round "$out/lmbench-$round.txt"
    timeout $((secs * 2 + 120)) "${policy[@]}" taskset -c 0 "$feelbench" run --probe micro \
        --load none -t "$secs" --warmup 0.5 --micro-mode lmbench -q \
        -o "$out/feelbench-$round.json" >"$out/feelbench-$round.txt" 2>&1
done
uptime >"$out/uptime-after.txt"

python3 - "$out" "$rounds" <<'EOF'
import json, pathlib, re, statistics, sys

out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])

def lmbench_of(text):
    """µs per operation of each LMbench line, under feelbench's names."""
    found = {}
    def take(op, pattern, convert=float):
        match = re.search(pattern, text, re.M)
        if match:
            found[op] = convert(match.group(1))
    take("fork", r"Process fork\+exit: ([\d.]+)")
    take("exec", r"Process fork\+execve: ([\d.]+)")
    take("sh", r"Process fork\+/bin/sh -c: ([\d.]+)")
    ctx = re.findall(r"process VM size=(\d+)k overhead=[\d.]+\n2 ([\d.]+)", text)
    for size, switch in ctx:
        found[{"0": "ctx0", "64": "ctx64"}[size]] = float(switch)
    take("pipe", r"Pipe latency: ([\d.]+)")
    take("unix", r"AF_UNIX sock stream latency: ([\d.]+)")
    take("udp", r"UDP latency using 127.0.0.1: ([\d.]+)")
    take("tcp", r"TCP latency using 127.0.0.1: ([\d.]+)")
    take("connect", r"TCP/IP connection cost to 127.0.0.1: ([\d.]+)")
    # lat_fs: size, files, creates/s, deletes/s.
    for size, creates, deletes in re.findall(r"^(\d+)k\t\d+\t(\d+)\t(\d+)$", text, re.M):
        if size in ("0", "1", "10"):
            name = {"0": "0", "1": "1k", "10": "10k"}[size]
            found[f"create{name}"] = 1e6 / float(creates)
            found[f"delete{name}"] = 1e6 / float(deletes)
    take("mmap", r"^1\.048576 ([\d.]+)$")
    take("fault", r"Pagefaults on \S+: ([\d.]+)")
    return found

def feelbench_of(path):
    """feelbench's medians, under the names of LMbench's operations: its
    table's columns are the operations in LMbench's order, named as their
    figures (another name where the unit is not LMbench's)."""
    run = json.loads(path.read_text())
    figures = run["scenarios"][0]["result"]["figures"]
    columns = [c["header"] for c in run["probes"]["micro"]["columns"]]
    return {op: (name, figures.get(f"{name}_p50_us")) for op, name in zip(ops, columns)}

ops = ["fork", "exec", "sh", "ctx0", "ctx64", "pipe", "unix", "udp", "tcp", "connect",
       "create0", "delete0", "create1k", "delete1k", "create10k", "delete10k", "mmap", "fault"]
lm = [lmbench_of((out / f"lmbench-{r}.txt").read_text()) for r in range(1, rounds + 1)]
fb = [feelbench_of(out / f"feelbench-{r}.json") for r in range(1, rounds + 1)]

def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None

def shown(v):
    return f"{v:.2f}" if v is not None else "-"

print((out / "uptime-before.txt").read_text().strip())
print((out / "uptime-after.txt").read_text().strip())
print(f"median of {rounds} rounds, µs per operation; ratio = feelbench / LMbench")
print(f"{'LMbench op':<11} {'feelbench figure':<17} {'feelbench':>10} {'LMbench':>10} {'ratio':>6}  rounds (feelbench | LMbench)")
for op in ops:
    figure = fb[0][op][0]
    ours_each = [r[op][1] for r in fb]
    theirs_each = [r.get(op) for r in lm]
    ours, theirs = median_of(ours_each), median_of(theirs_each)
    ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
    each = " ".join(map(shown, ours_each)) + " | " + " ".join(map(shown, theirs_each))
    print(f"{op:<11} {figure:<17} {shown(ours):>10} {shown(theirs):>10} {ratio:>6}  {each}")
EOF
