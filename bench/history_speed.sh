#!/usr/bin/env bash
# Benchmark, not a test: how fast the store answers over many runs, and how
# long a run spends storing itself.
#
# 1. A store of N synthetic runs (default 10,000): tests/data/v1-run.json
#    (x and gaming under none and burn, 4 scenarios, 62 figures of which 12
#    are headline figures) is imported once with `feelbench store import`,
#    which creates the real schema; Python's sqlite3 then copies its rows N-1
#    times into the same tables (a new run key, id, start an hour apart and
#    kernel each; every figure the seed's value times 1 + 2 % Gaussian noise,
#    seeded; x/burn's figures 30 % higher from run N/2 + 1 on: the injected
#    step). The copies share the seed's compressed document: nothing timed
#    here reads a document.
# 2. Times, each the best of -r rounds: `runs --format csv`, `history --probe
#    x --load burn --figure p99` (when this build has it), `regressions`
#    (table) and `regressions --probe x --load burn --figure p99`.
# 3. Times `store import` of one run file (default /work/runs/f1.json, a
#    default run of 16 MB) into a new store and into the big one: what `run`
#    spends storing itself once its JSON is written.
# Goals: history and regressions over 10,000 runs under 1 s; storing a run
# under 0.5 s.
set -euo pipefail

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-n RUNS] [-s SERIES] [-r ROUNDS] [-f RUN.json] [-b BINARY] [-o DIR] [-h]
  -n RUNS     synthetic runs (default 10000)
  -s SERIES   machines they are spread over, one series each (default 1)
  -r ROUNDS   timings of each command; the best is shown (default 3)
  -f RUN.json the run file whose storing is timed (default /work/runs/f1.json)
  -b BINARY   the feelbench to measure (default: a release build of this tree)
  -o DIR      where the stores go (default target/bench/history_speed)
EOF2
}
runs=10000
series=1
rounds=3
file=/work/runs/f1.json
feelbench=
out=
while getopts ":n:s:r:f:b:o:h" opt; do
    case $opt in
        n) runs=$OPTARG ;;
        s) series=$OPTARG ;;
        r) rounds=$OPTARG ;;
        f) file=$OPTARG ;;
        b) feelbench=$(realpath "$OPTARG") ;;
        o) out=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
for n in "$runs" "$series" "$rounds"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "history_speed.sh: -n, -s and -r take whole numbers >= 1" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
if [[ -z $feelbench ]]; then
    cargo build --release --quiet
    feelbench=$PWD/target/release/feelbench
fi
out=${out:-target/bench/history_speed}
mkdir -p "$out"
store=$out/store-$runs.sqlite
rm -f "$store" "$out/one.sqlite"

# The seed, then its copies.
"$feelbench" store import tests/data/v1-run.json --store "$store" >/dev/null
start=$(date +%s.%N)
python3 - "$store" "$runs" "$series" <<'PY'
import random, sqlite3, sys
store, runs, series = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(21)
db = sqlite3.connect(store)
cols = [r[1] for r in db.execute("PRAGMA table_info(run)") if r[1] != "id"]
seed = dict(zip(cols, db.execute(f"SELECT {', '.join(cols)} FROM run").fetchone()))
seed_id = db.execute("SELECT id FROM run").fetchone()[0]
scenarios = db.execute(
    "SELECT id, position, probe, load, status, measurements FROM scenario WHERE run_id = ?", (seed_id,)
).fetchall()
figures = {s[0]: db.execute(
    "SELECT name, unit, better, headline, value, ci_low, ci_high FROM figure WHERE scenario_id = ?", (s[0],)
).fetchall() for s in scenarios}
machine = db.execute("SELECT fingerprint, cpu_model, cpus, mem_gib, arch, governor, cmdline FROM machine").fetchone()
machines = [db.execute("SELECT id FROM machine").fetchone()[0]]
for m in range(1, series):
    cur = db.execute(
        "INSERT INTO machine (fingerprint, cpu_model, cpus, mem_gib, arch, governor, cmdline) VALUES (?,?,?,?,?,?,?)",
        (f"{machine[0][:12]}{m:04x}",) + machine[1:])
    machines.append(cur.lastrowid)
per_series = runs // series
start = seed["started_unix"]
for i in range(1, runs):
    s, k = i % series, i // series
    run = dict(seed)
    run["run_id"] = f"synthetic-{i:06d}"
    run["hostname"] = seed["hostname"] if s == 0 else f"lab{s}"
    run["run_key"] = f"{run['run_id']}@{run['hostname']}"
    run["machine_id"] = machines[s]
    # Series 0 is the seed's own; the others are machines of a lab.
    run["series_key"] = seed["series_key"] if s == 0 else f"{seed['series_key'][:12]}{s:04x}"
    run["started_unix"] = start + i * 3600
    run["started"] = f"synthetic +{i} h"
    run["kernel_release"] = f"6.18.{k}"
    run["comment"] = "synthetic"
    names = ", ".join(run)
    run_id = db.execute(f"INSERT INTO run ({names}) VALUES ({', '.join('?' * len(run))})", list(run.values())).lastrowid
    step = k >= per_series // 2
    for sid, position, probe, load, status, measurements in scenarios:
        new = db.execute(
            "INSERT INTO scenario (run_id, position, probe, load, status, measurements) VALUES (?,?,?,?,?,?)",
            (run_id, position, probe, load, status, measurements)).lastrowid
        factor = 1.3 if step and (probe, load) == ("x", "burn") else 1.0
        rows = []
        for name, unit, better, headline, value, lo, hi in figures[sid]:
            v = value * factor * (1 + random.gauss(0, 0.02))
            rows.append((new, name, unit, better, headline, v, lo, hi))
        db.executemany(
            "INSERT INTO figure (scenario_id, name, unit, better, headline, value, ci_low, ci_high) VALUES (?,?,?,?,?,?,?,?)",
            rows)
db.commit()
print(f"{runs} runs in {series} series: {db.execute('SELECT COUNT(*) FROM figure').fetchone()[0]} figures, "
      f"{db.execute('SELECT COUNT(*) FROM figure WHERE headline = 1').fetchone()[0]} of them headline")
PY
echo "made in $(echo "$(date +%s.%N) - $start" | bc) s; store $(du -h "$store" | cut -f1)"

# best_of LABEL COMMAND...: the smallest wall time of $rounds runs.
best_of() {
    local label=$1; shift
    local best=
    for _ in $(seq "$rounds"); do
        local t0 t1 took
        t0=$(date +%s%N)
        "$@" >"$out/last.out" 2>"$out/last.err" || true
        t1=$(date +%s%N)
        took=$(( (t1 - t0) / 1000000 ))
        if [[ -z $best || $took -lt $best ]]; then best=$took; fi
    done
    printf '%-58s %6d ms\n' "$label" "$best"
}

echo
echo "best of $rounds, wall time:"
best_of "runs --format csv" "$feelbench" runs --format csv --store "$store"
if "$feelbench" history --help >/dev/null 2>&1; then
    best_of "history --probe x --load burn --figure p99" \
        "$feelbench" history --probe x --load burn --figure p99 --store "$store"
else
    echo "history: not in this build (helper H's command); not timed"
fi
best_of "regressions (every headline series)" "$feelbench" regressions --store "$store"
cp "$out/last.out" "$out/regressions.txt"
best_of "regressions --probe x --load burn --figure p99" \
    "$feelbench" regressions --probe x --load burn --figure p99 --store "$store"
echo
head -1 "$out/regressions.txt"
grep -E '^(x|gaming) ' "$out/regressions.txt" | head -8 || true

echo
if [[ -f $file ]]; then
    echo "storing $(basename "$file") ($(du -h "$file" | cut -f1)):"
    key=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["run"]["id"] + "@" + d["system"]["hostname"])' "$file")
    for target in "$out/one.sqlite" "$store"; do
        best=
        for _ in $(seq "$rounds"); do
            # A run already stored is skipped: take it out to time a real add.
            rm -f "$out/one.sqlite"
            sqlite3 "$store" "PRAGMA foreign_keys = ON; DELETE FROM run WHERE run_key = '$key'"
            t0=$(date +%s%N)
            "$feelbench" store import "$file" --store "$target" >/dev/null
            t1=$(date +%s%N)
            took=$(( (t1 - t0) / 1000000 ))
            if [[ -z $best || $took -lt $best ]]; then best=$took; fi
        done
        printf '%-58s %6d ms\n' "store import into $(basename "$target")" "$best"
    done
    # `run` has the document in memory: reading and parsing the file is
    # import's own cost, about what `report` spends before it renders.
    best_of "report --format csv of the file (read, parse, render)" "$feelbench" report --format csv "$file"
else
    echo "$file is not there: storing not timed (-f RUN.json)"
fi
