#!/usr/bin/env bash
# Benchmark, not a test: feelbench's micro probe under no load, in both
# modes (--micro-mode paced and lmbench), against references on the same
# machine, one after the other: micro_ref (bench/micro_ref.c, built here with
# gcc -O2: each of the 18 operations with the probe's system calls and sizes,
# paced at the probe's rhythm, and back to back on CPU 0 as LMbench's loops
# and the probe's lmbench mode run them, each instance a loop of about 1 ms
# divided by its operations, its page fault then per page of a mapping),
# perf bench sched pipe (a pipe round trip, so one context switch as
# timed is half of it) and stress-ng stressors with --metrics-brief (bogo
# ops/s turned into µs per op). Prints per operation each mode's median
# against micro_ref's matching one and their ratio, then the other
# references against the lmbench mode. Goal on an idle machine: ratio within
# 1.3 where they measure the same thing. Run documents and tool output go to
# target/bench/micro/TIMESTAMP.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-t SECS] [-b BINARY] [-h]
  -t SECS    seconds of the feelbench scenario, of micro_ref's paced run and of
             each stressor (default 10)
  -b BINARY  the feelbench to run (default: target/release/feelbench, built)
  -h         this help
Runs feelbench run --probe micro --load none in both --micro-mode, then
micro_ref (SECS paced, then 0.5 s per operation back to back on CPU 0), perf
bench sched pipe and the stress-ng stressors fork, exec, switch, pipe, sock,
udp and sockpair, and prints per operation feelbench's medians, the
references and their ratios.
EOF
}

secs=10
feelbench=
while getopts ":t:b:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        b) feelbench=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "micro.sh: -t takes whole seconds >= 1" >&2; exit 2; }
for tool in gcc perf stress-ng python3; do
    command -v "$tool" >/dev/null || {
        echo "micro.sh: $tool is missing; install it with: apt-get install ${tool/perf/linux-perf}" >&2
        exit 1
    }
done

cd "$(dirname "$0")/.."
if [[ -z $feelbench ]]; then
    cargo build --release
    feelbench=target/release/feelbench
fi
out=target/bench/micro/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "micro.sh: writing to $out" >&2
# Scratch directories of the references, removed however the script ends.
trap 'rm -rf "$out/micro-ref-tmp" "$out/stress-ng-tmp"' EXIT
uptime >"$out/uptime-before.txt"
gcc -O2 -Wall -o target/bench/micro_ref bench/micro_ref.c

for mode in paced lmbench; do
    "$feelbench" run --probe micro --load none -t "$secs" --warmup 0.5 --micro-mode "$mode" -q \
        -o "$out/micro-$mode.json" >"$out/feelbench-$mode.txt" 2>&1
done

# The same operations: all in turns at the probe's rhythm (50 Hz each) for as
# long as the scenario, unpinned as the probe runs, files in a scratch
# directory on the same file system as the probe's (the working directory);
# then each alone, back to back (0.5 s and at least 500 instances each), on
# CPU 0, where the probe's lmbench mode runs (the first CPU it may use).
ref_scratch=$out/micro-ref-tmp
mkdir -p "$ref_scratch"
target/bench/micro_ref -b 0 -p "$secs" -d "$ref_scratch" \
    >"$out/micro-ref-paced.txt" 2>"$out/micro-ref-errors.txt"
taskset -c 0 target/bench/micro_ref -b 0.5 -p 0 -d "$ref_scratch" \
    >"$out/micro-ref-b2b-cpu0.txt" 2>>"$out/micro-ref-errors.txt"
rmdir "$ref_scratch"

# A pipe round trip between two processes, back to back, 100 000 times: on
# one CPU, where the scheduler keeps feelbench's pair (a partner woken by the
# worker just before runs where the worker ran), and free to use both, where
# on a VM each round trip may wait for an idle virtual CPU to wake.
taskset -c 0 perf bench sched pipe -l 100000 >"$out/perf-sched-pipe.txt" 2>&1
perf bench sched pipe -l 100000 >"$out/perf-sched-pipe-2cpus.txt" 2>&1

# One instance of each stressor, in a scratch directory of its own; its
# metrics lines go to a file of its own. A stressor that cannot run here
# shows as "-".
scratch=$out/stress-ng-tmp
mkdir -p "$scratch"
chmod 1777 "$scratch"
stressor() {
    local name=$1
    shift
    "${as_user[@]}" stress-ng "--$name" 1 "$@" -t "$secs" --metrics-brief --temp-path "$scratch" \
        >"$out/stress-$name.txt" 2>&1 || true
}
as_user=()
stressor fork --fork-max 1
# stress-ng's exec stressor refuses to run as root.
[[ $EUID -eq 0 ]] && as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
stressor exec --exec-max 1 --exec-fork-method fork --exec-method execve
as_user=()
stressor switch
stressor pipe
stressor sock --sock-domain ipv4 --sock-nodelay
stressor udp --udp-domain ipv4
stressor sockpair
uptime >"$out/uptime-after.txt"
rmdir "$scratch"

python3 - "$out" <<'EOF'
import json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])

OPS = ["fork", "exec", "sh", "ctx0", "ctx64", "pipe", "unix", "udp", "tcp", "connect",
       "create0", "delete0", "create1k", "delete1k", "create10k", "delete10k", "mmap", "fault"]

def figures_of(mode):
    """The result, and each operation's figure name: the table's columns
    are the operations in order, named as their figures (in the lmbench
    mode, another name where the unit is not LMbench's)."""
    run = json.loads((out / f"micro-{mode}.json").read_text())
    columns = [c["header"] for c in run["probes"]["micro"]["columns"]]
    return run["scenarios"][0]["result"], dict(zip(OPS, columns))

results, names = {}, {}
for mode in ("paced", "lmbench"):
    results[mode], names[mode] = figures_of(mode)

def p50(mode, op):
    base, _, rest = op.partition("_")
    name = names[mode].get(base, base) + (f"_{rest}" if rest else "")
    return results[mode]["figures"].get(f"{name}_p50_us")

def shown(v):
    return f"{v:.2f}" if v is not None else "-"

def ratio(ours, ref):
    return f"{ours / ref:.2f}" if ours and ref else "-"

# micro_ref's lines: MODE OP P50_US P99_US INSTANCES ("-" when it failed).
ref = {}
for name, mode in [("micro-ref-paced.txt", "paced"), ("micro-ref-b2b-cpu0.txt", "lmbench")]:
    for line in (out / name).read_text().splitlines():
        if line.startswith("#"):
            continue
        _, op, ref_p50, _, _ = line.split()
        ref[mode, op] = float(ref_p50) if ref_p50 != "-" else None

def perf_round_trip_us(name):
    text = (out / name).read_text()
    return float(re.search(r"([\d.]+) usecs/op", text).group(1))

def stress_us(name):
    """µs per bogo op: 1e6 over bogo ops/s in real time."""
    text = (out / f"stress-{name}.txt").read_text()
    match = re.search(rf"\] {name}\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)", text)
    return 1e6 / float(match.group(1)) if match else None

def stress_switch_us():
    text = (out / "stress-switch.txt").read_text()
    match = re.search(r"([\d.]+) nanosecs per context switch", text)
    return float(match.group(1)) / 1e3 if match else None

round_trip = perf_round_trip_us("perf-sched-pipe.txt")
round_trip_2cpus = perf_round_trip_us("perf-sched-pipe-2cpus.txt")
rows = [
    ("fork", "stress-ng --fork (fork-max 1)", stress_us("fork"), True,
     "fork+exit+wait; stress-ng forks from a smaller process"),
    ("exec", "stress-ng --exec (execve, fork)", stress_us("exec"), False,
     "stress-ng execs its own, larger binary, not /bin/true"),
    ("ctx0_raw", "perf bench sched pipe / 2 (1 CPU)", round_trip / 2, True,
     "one switch as timed: half a pipe round trip"),
    ("ctx0", "stress-ng --switch", stress_switch_us(), False,
     "pipe writes that may queue: a rate of switches, not a round trip"),
    ("pipe", "perf bench sched pipe (1 CPU)", round_trip, True, "a pipe round trip"),
    ("pipe", "perf bench sched pipe (2 CPUs)", round_trip_2cpus, False,
     "the pair on two CPUs, where the lmbench mode keeps it on one"),
    ("pipe", "stress-ng --pipe", stress_us("pipe"), False,
     "one-way stream of 512-byte writes: throughput"),
    ("unix", "stress-ng --sockpair", stress_us("sockpair"), False,
     "one-way stream over a socket pair: throughput"),
    ("udp", "stress-ng --udp", stress_us("udp"), False,
     "one-way datagrams: throughput"),
    ("tcp", "stress-ng --sock", stress_us("sock"), False,
     "a connection per op carrying many messages"),
]
measured_s = results["paced"]["tally"]["counts"]["measured_s"]
ops = ["fork", "exec", "sh", "ctx0", "ctx0_raw", "ctx64", "ctx64_raw", "pipe", "unix", "udp",
       "tcp", "connect", "create0", "delete0", "create1k", "delete1k", "create10k",
       "delete10k", "mmap", "fault"]
print(f"feelbench micro under none ({measured_s:.0f} s per mode) against micro_ref's matching "
      "mode (median µs per op; ratio = feelbench / micro_ref; ctxN: lat_ctx's, less the "
      "overhead; ctxN_raw: half the round trip as timed; lmbench's fault: per page)")
print(f"{'':<10} {'paced':>26}   {'lmbench (ref: b2b, CPU 0)':>26}")
print(f"{'op':<10}" + f" {'feelbench':>9} {'micro_ref':>9} {'ratio':>6}  " * 2)
for op in ops:
    line = f"{op:<10}"
    for mode in ("paced", "lmbench"):
        ours, theirs = p50(mode, op), ref.get((mode, op))
        line += f" {shown(ours):>9} {shown(theirs):>9} {ratio(ours, theirs):>6}  "
    print(line.rstrip())
print()
print("other references (perf bench, stress-ng), against the lmbench mode")
print(f"{'op':<9} {'feelbench p50 µs':>17}  {'reference':<34} {'ref µs':>9} {'ratio':>6}  like-for-like")
for op, tool, figure, like, note in rows:
    ours = p50("lmbench", op)
    mark = "yes" if like else "no: " + note
    if like:
        mark += f" ({note})"
    print(f"{op:<9} {shown(ours):>17}  {tool:<34} {shown(figure):>9} {ratio(ours, figure):>6}  {mark}")
EOF
echo "load before: $(cat "$out/uptime-before.txt")"
echo "load after:  $(cat "$out/uptime-after.txt")"
