#!/usr/bin/env bash
# Benchmark, not a test: `feelbench watch` left running for a long time (an
# hour by default), as a service would run it: the default canaries, the
# flight recorder when root, `--listen` on loopback scraped every 15 s as
# Prometheus would, its minutes written to a store of its own. Every
# minute it prints the watch's RSS (VmRSS), its CPU over that minute as %
# of one CPU, its incidents so far and the machine's load average; at the
# end, RSS at the first and last minute and at most, the slope of RSS over
# the second half (kB an hour, a least-squares line), the CPU over the
# whole soak and incidents an hour. Other work on the machine counts in
# every figure: the load average says how much there was.
set -euo pipefail

source "$(dirname "$0")/watch_options.sh" 3600 "the watch runs" "$@"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

python3 - "$secs" "$work" "$port" "$build" <<'PY'
import json, os, subprocess, sys, time, urllib.request
secs, work, port, build = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmd = [build, "watch", "-t", str(int(secs)), "-o", f"{work}/w.json",
       "--listen", f"127.0.0.1:{port}", "--store", f"{work}/store"]
child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(f"{work}/err", "w"))
ticks = os.sysconf("SC_CLK_TCK")

def cpu_s():
    fields = open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks

def rss_kb():
    for line in open(f"/proc/{child.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

def incidents():
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    except OSError:
        return None
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
               if l.startswith("feelbench_watch_incidents_total{"))

start = time.time()
rows, last_cpu, last_t, next_minute = [], 0.0, start, start + 60
print("minute  RSS kB  CPU %  incidents  load average", flush=True)
while child.poll() is None:
    time.sleep(15)
    try:
        seen = incidents()
        if time.time() < next_minute:
            continue
        now, cpu, rss = time.time(), cpu_s(), rss_kb()
    except (OSError, IndexError):
        break
    minute = round((now - start) / 60)
    pct = 100 * (cpu - last_cpu) / (now - last_t)
    rows.append((now - start, rss))
    print(f"{minute:6d}  {rss:6d}  {pct:5.2f}  {'-' if seen is None else int(seen):>9}  "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    last_cpu, last_t, next_minute = cpu, now, next_minute + 60
code = child.wait()
use = __import__("resource").getrusage(__import__("resource").RUSAGE_CHILDREN)
doc = json.load(open(f"{work}/w.json"))
total = sum(c["incidents"] for c in doc["canaries"])
half = rows[len(rows) // 2:]
slope = 0.0
if len(half) > 1:
    mt = sum(t for t, _ in half) / len(half)
    mr = sum(r for _, r in half) / len(half)
    slope = sum((t - mt) * (r - mr) for t, r in half) / sum((t - mt) ** 2 for t, _ in half) * 3600
print(f"exit {code}; {doc['seconds']:.0f} s; CPU {100 * (use.ru_utime + use.ru_stime) / doc['seconds']:.2f} % of one CPU; "
      f"RSS {rows[0][1] if rows else 0} kB at the first minute, {rows[-1][1] if rows else 0} kB at the last, "
      f"{max((r for _, r in rows), default=0)} kB at most; second half's slope {slope:+.0f} kB an hour; "
      f"{total} incidents ({3600 * total / doc['seconds']:.0f} an hour); recorder {doc['recorder']['state']}")
PY
