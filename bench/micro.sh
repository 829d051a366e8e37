#!/usr/bin/env bash
# Benchmark, not a test: feelbench's micro probe under no load against the
# reference tools at hand on the same machine, back to back: perf bench sched
# pipe (a pipe round trip, so one context switch is half of it) and stress-ng
# stressors with --metrics-brief (bogo ops/s turned into µs per op). Prints per
# operation feelbench's median, the reference's figure, their ratio, and
# whether the two measure the same thing. Goal on an idle machine: ratio
# within 1.3 where they do. Run documents and tool output go to
# target/bench/micro/TIMESTAMP.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-t SECS] [-b BINARY] [-h]
  -t SECS    seconds of the feelbench scenario and of each stressor (default 10)
  -b BINARY  the feelbench to run (default: target/release/feelbench, built)
  -h         this help
Runs feelbench run --probe micro --load none, then perf bench sched pipe and
the stress-ng stressors fork, exec, switch, pipe, sock, udp and sockpair, and
prints per operation feelbench's median, the reference and their ratio.
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
for tool in perf stress-ng python3; do
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
uptime >"$out/uptime-before.txt"

"$feelbench" run --probe micro --load none -t "$secs" --warmup 0.5 -q -o "$out/micro.json" \
    >"$out/feelbench.txt" 2>&1

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
run = json.loads((out / "micro.json").read_text())
figures = run["scenarios"][0]["result"]["figures"]

def p50(op):
    return figures.get(f"{op}_p50_us")

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
    ("ctx0", "perf bench sched pipe / 2 (1 CPU)", round_trip / 2, True,
     "one switch: half a pipe round trip"),
    ("ctx0", "stress-ng --switch", stress_switch_us(), False,
     "pipe writes that may queue: a rate of switches, not a round trip"),
    ("pipe", "perf bench sched pipe (1 CPU)", round_trip, True, "a pipe round trip"),
    ("pipe", "perf bench sched pipe (2 CPUs)", round_trip_2cpus, False,
     "the pair on two CPUs, where feelbench's stays on one"),
    ("pipe", "stress-ng --pipe", stress_us("pipe"), False,
     "one-way stream of 512-byte writes: throughput"),
    ("unix", "stress-ng --sockpair", stress_us("sockpair"), False,
     "one-way stream over a socket pair: throughput"),
    ("udp", "stress-ng --udp", stress_us("udp"), False,
     "one-way datagrams: throughput"),
    ("tcp", "stress-ng --sock", stress_us("sock"), False,
     "a connection per op carrying many messages"),
]
measured_s = run["scenarios"][0]["result"]["tally"]["counts"]["measured_s"]
print(f"feelbench micro under none ({measured_s:.0f} s) against references, back to back")
print(f"{'op':<6} {'feelbench p50 µs':>17}  {'reference':<34} {'ref µs':>9} {'ratio':>6}  like-for-like")
for op, tool, ref, like, note in rows:
    ours = p50(op)
    ratio = f"{ours / ref:6.2f}" if ours and ref else "     -"
    shown = lambda v: f"{v:.1f}" if v is not None else "-"
    mark = "yes" if like else "no: " + note
    if like:
        mark += f" ({note})"
    print(f"{op:<6} {shown(ours):>17}  {tool:<34} {shown(ref):>9} {ratio}  {mark}")
others = ["sh", "ctx64", "connect", "create0", "delete0", "create1k", "delete1k",
          "create10k", "delete10k", "mmap", "fault"]
print("no reference at hand (feelbench p50 µs): "
      + ", ".join(f"{op} {p50(op):.1f}" if p50(op) else f"{op} -" for op in others))
EOF
echo "load before: $(cat "$out/uptime-before.txt")"
echo "load after:  $(cat "$out/uptime-after.txt")"
