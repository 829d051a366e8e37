#!/usr/bin/env bash
# A lab of 8 machines sending to one PostgreSQL store at once: a cluster
# of its own (Debian's server binaries, run as nobody when this runs as
# root, on 127.0.0.1 and a free port, password login), 5 real short runs
# made into 200 distinct run files (run.id and hostname changed: 8 hosts
# x 25 runs), 8 `feelbench submit` processes at once, 25 runs each; then
# checks that 200 runs are stored, each once, sends them all again (still
# 200), and times one run storing itself in the database. The cluster is
# removed at the end. Figures: bench/postgres_submit.md.
#
# Usage: bench/postgres_submit.sh   (FEELBENCH=path to use another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${FEELBENCH:-target/release/feelbench}")
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 2; }

work=$(mktemp -d)
chmod 755 "$work"
as_server() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
cleanup() {
    as_server "$pgbin/pg_ctl" -D "$work/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
password="bench-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
printf '%s\n' "$password" >"$work/pw"
[ "$(id -u)" != 0 ] || chown nobody "$work" "$work/pw"
as_server "$pgbin/initdb" -D "$work/data" -U bench --pwfile "$work/pw" --auth-local=trust \
    --auth-host=scram-sha-256 --no-locale -E UTF8 >/dev/null
cat >>"$work/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 40
CONF
as_server "$pgbin/pg_ctl" -D "$work/data" -l "$work/log" -o "-p $port" -w start >/dev/null
export PGPASSWORD="$password"
url="postgres://bench@127.0.0.1:$port/postgres"
psql() { "$pgbin/psql" -X -A -t -h 127.0.0.1 -p "$port" -U bench -d postgres -c "$1"; }

echo "== 5 real runs (x under none, 1 s each)"
for i in 1 2 3 4 5; do
    XDG_DATA_HOME="$work/seed-home" "$bin" run --probe x --load none -t 1 -q --no-store \
        -o "$work/seed$i.json" >/dev/null 2>&1
done
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
seeds = [json.load(open(f"{work}/seed{i}.json")) for i in range(1, 6)]
def write(doc, directory, name):
    os.makedirs(f"{work}/{directory}", exist_ok=True)
    with open(f"{work}/{directory}/{name}.json", "w") as f:
        json.dump(doc, f)
for k in range(200):
    machine, nth = divmod(k, 25)
    doc = json.loads(json.dumps(seeds[k % 5]))
    doc["run"]["id"] = f"{doc['run']['id']}-m{machine}-{nth:02d}"
    doc["system"]["hostname"] = f"lab{machine}"
    write(doc, f"m{machine}", f"r{nth:02d}")
for nth in range(25):
    doc = json.loads(json.dumps(seeds[nth % 5]))
    doc["run"]["id"] = f"{doc['run']['id']}-shared-{nth:02d}"
    doc["system"]["hostname"] = "shared"
    write(doc, "shared", f"r{nth:02d}")
PY

# submit_all DIR-PATTERN: 8 machines at once, machine m sending DIR-PATTERN
# with m for {m}.
submit_all() {
    local pids=() status=0
    for m in 0 1 2 3 4 5 6 7; do
        XDG_DATA_HOME="$work/home$m" "$bin" submit --store "$url" "$work/${1//\{m\}/$m}/"*.json \
            >"$work/out$m" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    cat "$work"/out? | sed 's/^/   /'
    return $status
}

# submit_all HOSTS, timed, then what the database holds.
timed_submit() {
    local start end
    start=$(date +%s.%N)
    submit_all "$1"
    end=$(date +%s.%N)
    echo "wall time: $(python3 -c "print(f'{$end - $start:.2f}')") s"
    echo "rows, distinct run keys: $(psql 'SELECT count(*), count(DISTINCT run_key) FROM run')"
}

echo "== 8 machines x 25 runs, at once"
timed_submit 'm{m}'

echo "== the same 200 runs again, at once"
timed_submit 'm{m}'

echo "== 8 machines sending the same 25 new runs at once (a race on every run)"
timed_submit 'shared'
echo "runs of host shared: $(psql "SELECT count(*) FROM run WHERE hostname = 'shared'")"
echo "scenarios, figures: $(psql 'SELECT (SELECT count(*) FROM scenario), (SELECT count(*) FROM figure)')"

echo "== one run storing itself (the local store and the database), 5 times"
for i in 1 2 3 4 5; do
    doc="$work/one$i.json"
    python3 -c "import json,sys; d=json.load(open('$work/seed1.json')); d['run']['id'] += '-one$i'; json.dump(d, open('$doc', 'w'))"
    start=$(date +%s.%N)
    XDG_DATA_HOME="$work/one-home" "$bin" submit --store "$url" "$doc" >/dev/null
    end=$(date +%s.%N)
    echo "   submit of one run: $(python3 -c "print(f'{$end - $start:.3f}')") s"
done
