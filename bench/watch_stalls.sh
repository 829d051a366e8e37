#!/usr/bin/env bash
# Benchmark, not a test: does `feelbench watch` catch and name injected
# stalls? A separate process named fb-stall (perl with its name set),
# SCHED_FIFO 50, pinned on the canaries' CPU, busy MS ms every 2 s, N times,
# writing each stall's CLOCK_MONOTONIC start and end; with -g it runs in a
# cgroup of its own (fb-stall-bench.scope, in the cgroup2 hierarchy). The
# watch runs the default canaries pinned on that CPU, keeping every incident.
# Says, per canary: stalls injected, stalls with an incident overlapping
# them, and of those the share naming fb-stall (with its pid) and its cgroup.
# Needs root (SCHED_FIFO, the flight recorder, the cgroup).
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-b BUILD] [-n STALLS] [-m MS] [-c CPU] [-g]
  -b BUILD  feelbench binary (default target/release/feelbench)
  -n N      stalls injected, 2 s apart (default 10)
  -m MS     each stall's busy time (default 30)
  -c CPU    the CPU of the canaries and the stalls (default 1)
  -g        run the staller in a cgroup of its own
EOF2
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench n=10 ms=30 cpu=1 group=
while getopts ":b:n:m:c:gh" opt; do
    case $opt in
        b) build=$OPTARG ;;
        n) n=$OPTARG ;;
        m) ms=$OPTARG ;;
        c) cpu=$OPTARG ;;
        g) group=1 ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }

work=$(mktemp -d)
cgdir=
for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    if [ -z "$cgdir" ] && [ -e "$root/cgroup.procs" ] && [ "$(stat -fc %T "$root")" = cgroup2fs ]; then
        cgdir=$root/fb-stall-bench.scope
    fi
done
stall_pid=
cleanup() {
    [ -n "$stall_pid" ] && kill "$stall_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    [ -n "$group" ] && [ -d "$cgdir" ] && rmdir "$cgdir" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build" watch -t $((2 * n + 8)) --cpus "$cpu" --keep 100000 -o "$work/watch.json" >"$work/lines" 2>"$work/err" &
watch_pid=$!
# The stalls begin once the canaries run (the recorder's cost is timed first).
until grep -qs fb-canary-timer /proc/$watch_pid/task/*/comm; do sleep 0.1; done
# The staller waits for its cgroup, then stalls N times.
chrt -f 50 taskset -c "$cpu" perl -MTime::HiRes=time,sleep,clock_gettime,CLOCK_MONOTONIC -e '
    $0 = "fb-stall"; my ($n, $ms, $out) = @ARGV; sleep 0.5;
    open(my $f, ">", $out) or die; select((select($f), $| = 1)[0]);
    for (1..$n) { my $t = time; my $s = clock_gettime(CLOCK_MONOTONIC);
        while (time - $t < $ms / 1000) {}
        printf $f "%d %d\n", $s * 1e9, clock_gettime(CLOCK_MONOTONIC) * 1e9; sleep 2 - $ms / 1000; }' \
    "$n" "$ms" "$work/stalls" &
stall_pid=$!
if [ -n "$group" ]; then
    mkdir -p "$cgdir"
    echo "$stall_pid" >"$cgdir/cgroup.procs"
fi
wait "$stall_pid" || true
stall_pid_done=$stall_pid
stall_pid=
wait "$watch_pid"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -v '^feelbench: watch: calibrating' "$work/err" || true
tail -5 "$work/lines"
python3 - "$work/watch.json" "$work/stalls" "$stall_pid_done" "${group:+fb-stall-bench.scope}" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
stalls = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
pid, unit = int(sys.argv[3]), sys.argv[4] or "/"
for canary in [c["name"] for c in doc["canaries"]]:
    caught = named = grouped = 0
    for start, end in stalls:
        over = [i for i in doc["incidents"] if i["canary"] == canary
                and i["split"]["due_ns"] <= end and i["split"]["ended_ns"] >= start]
        if not over:
            continue
        caught += 1
        culprits = [c for i in over for c in i.get("ran_instead", [])]
        mine = [c for c in culprits if c.get("thread") == "fb-stall" and c.get("pid") == pid]
        named += bool(mine)
        grouped += any(c.get("unit") == unit for c in mine)
    print(f"{canary}: {len(stalls)} stalls injected, {caught} caught by an incident, "
          f"{named} of them naming fb-stall[{pid}], {grouped} with its cgroup {unit}")
print(f"incidents in all: {len(doc['incidents'])}; recorder: {doc['recorder']}")
PY
