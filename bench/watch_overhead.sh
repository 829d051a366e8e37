#!/usr/bin/env bash
# Benchmark, not a test: what `feelbench watch` costs with its default
# canaries, without the flight recorder (--no-recorder) and with it (root),
# on the machine as it is ("idle": no load of ours) and under a burn load
# (one busy perl loop per CPU, nice 0, unpinned): the watch process's CPU
# time (getrusage of the child: canaries, recorder's reading thread,
# sampler, main loop; the kernel's own time writing the recorder's records is
# not in it, the recorder's cpu_pct in the JSON estimates it) as % of one
# CPU, its RSS at the start and end of the watch and at most (VmRSS every
# second), and its incidents per hour. The machine's load average is said
# before each: other work on it counts in every figure.
set -euo pipefail

source "$(dirname "$0")/watch_options.sh" 60 "per watch" "$@"

work=$(mktemp -d)
burners=()
stop_burn() {
    for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    burners=()
}
trap 'stop_burn; rm -rf "$work"' EXIT

measure() { # LABEL WATCH-OPTIONS...
    local label=$1
    shift
    echo "== $label, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 - "$secs" "$work/w.json" "$build" watch -t "$secs" -o "$work/w.json" "$@" <<'PY'
import json, resource, subprocess, sys, time
secs, out, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
rss = []
while child.poll() is None:
    try:
        for line in open(f"/proc/{child.pid}/status"):
            if line.startswith("VmRSS:"):
                rss.append(int(line.split()[1]))
    except OSError:
        pass
    time.sleep(1)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
doc = json.load(open(out))
cpu = use.ru_utime + use.ru_stime
incidents = sum(c["incidents"] for c in doc["canaries"])
print(f"  watch CPU {100 * cpu / doc['seconds']:.2f} % of one CPU over {doc['seconds']:.0f} s; "
      f"RSS {rss[1] if len(rss) > 1 else 0} kB after 1 s, {rss[-1] if rss else 0} kB at the end, {max(rss or [0])} kB at most; "
      f"{incidents} incidents ({3600 * incidents / doc['seconds']:.0f} an hour); "
      f"recorder {doc['recorder']['state']}, {doc['recorder']['cpu_pct']:.2f} % of a CPU")
for c in doc["canaries"]:
    print(f"  {c['name']}: p50 {c['p50_ms']:.3f} ms, p99 {c['p99_ms']:.3f} ms, max {c['max_ms']:.3f} ms")
PY
}

measure "as it is, no recorder" --no-recorder
[ "$(id -u)" = 0 ] && measure "as it is, recorder"
for _ in $(seq "$(nproc)"); do
    perl -e '1 while 1' &
    burners+=($!)
done
measure "under burn, no recorder" --no-recorder
[ "$(id -u)" = 0 ] && measure "under burn, recorder"
stop_burn
