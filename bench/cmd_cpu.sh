#!/usr/bin/env bash
# Benchmark, not a test: the CPU % feelbench gives a `cmd:` load against what
# the kernel accounts to the command's processes over the same window.
# feelbench runs `cmd:stress-ng --cpu N` under an idle probe (custom, 0 % CPU,
# a 100 ms timer) while a sampler reads the utime + stime of every stress-ng
# process in /proc every 20 ms; the kernel's figure is the growth of their
# sum between the two moments the run's telemetry was taken (the probe's
# window, `telemetry.before/after.taken_ns`, CLOCK_MONOTONIC), over that time.
# As root the load is counted by its accounting cgroup (exact); `-u nobody`
# runs feelbench as nobody, who can make no cgroup (a lower bound, `>=`).
# Goal: feelbench within 10 % of the kernel's figure.
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-t SECS] [-n CPUS] [-r ROUNDS] [-u USER] [-b BINARY] [-h]
  -t SECS    seconds per measurement (default 5)
  -n CPUS    stress-ng --cpu workers (default: the CPUs here)
  -r ROUNDS  measurements (default 3)
  -u USER    run feelbench as USER (root only; e.g. nobody: no cgroup)
  -b BINARY  the feelbench to measure (default: a release build of this tree)
EOF2
}
secs=5
workers=$(nproc)
rounds=3
user=
feelbench=
while getopts ":t:n:r:u:b:h" opt; do
    case $opt in
        t) secs=$OPTARG ;;
        n) workers=$OPTARG ;;
        r) rounds=$OPTARG ;;
        u) user=$OPTARG ;;
        b) feelbench=$(realpath "$OPTARG") ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "cmd_cpu.sh: -t takes whole seconds >= 1" >&2; exit 2; }
[[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "cmd_cpu.sh: -n takes a whole number >= 1" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "cmd_cpu.sh: -r takes a whole number >= 1" >&2; exit 2; }
command -v stress-ng >/dev/null || { echo "cmd_cpu.sh: needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }

cd "$(dirname "$0")/.."
if [[ -z $feelbench ]]; then
    cargo build --release -q
    feelbench=$PWD/target/release/feelbench
fi
tmp=$(mktemp -d /tmp/cmd-cpu-bench.XXXXXX)
chmod 777 "$tmp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
as_user=()
[[ -n $user ]] && as_user=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups env HOME="$tmp")

# Samples "MONOTONIC_NS CPU_TICKS" of all stress-ng processes until killed.
sampler() {
    exec python3 - "$1" >/dev/null <<'EOF2'
import os, sys, time
out = open(sys.argv[1], "w")
while True:
    ticks = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        if comm.startswith("stress-ng"):
            fields = stat[stat.rindex(")") + 2 :].split()
            ticks += int(fields[11]) + int(fields[12])
    out.write(f"{time.monotonic_ns()} {ticks}\n")
    out.flush()
    time.sleep(0.02)
EOF2
}

printf '%-6s %12s %12s %8s\n' round feelbench kernel ratio
for round in $(seq "$rounds"); do
    (sampler "$tmp/samples-$round") &
    sampler_pid=$!
    (cd "$tmp" && "${as_user[@]}" "$feelbench" run --probe custom -C 0 -I 100000 \
        --load "cmd:stress-ng --cpu $workers --quiet" -t "$secs" -q -o run.json >/dev/null 2>"$tmp/stderr") ||
        { cat "$tmp/stderr" >&2; kill "$sampler_pid"; exit 1; }
    kill "$sampler_pid"
    wait "$sampler_pid" 2>/dev/null || true
    python3 - "$tmp/run.json" "$tmp/samples-$round" "$round" <<'EOF2'
import json, os, sys
run = json.load(open(sys.argv[1]))
scenario = run["scenarios"][0]
work = scenario["load_work"][0]
telemetry = scenario["telemetry"]
start, end = telemetry["before"]["taken_ns"], telemetry["after"]["taken_ns"]
samples = [tuple(map(int, line.split())) for line in open(sys.argv[2])]
def at(t):
    # The cumulative ticks at t, interpolated between the samples around it.
    before = max((s for s in samples if s[0] <= t), default=None)
    after = min((s for s in samples if s[0] >= t), default=None)
    if before is None or after is None or after[0] == before[0]:
        return (before or after)[1]
    return before[1] + (after[1] - before[1]) * (t - before[0]) / (after[0] - before[0])
hz = os.sysconf("SC_CLK_TCK")
kernel = 100 * (at(end) - at(start)) / hz / ((end - start) / 1e9)
mark = ">=" if work.get("cpu_pct_lower_bound") else ""
ours = work["cpu_pct"]
print(f"{sys.argv[3]:<6} {mark + format(ours, '.1f') + ' %':>12} {kernel:>10.1f} % {ours / kernel:>8.3f}")
EOF2
done
