#!/usr/bin/env bash
# Benchmark, not a test: the same run under two I/O schedulers of the work
# directory's disk, then `feelbench compare` of the two (the environment
# records the scheduler, so compare lists it as the difference). The disk's
# scheduler is set back to what it was at every kind of exit. Needs root.
set -euo pipefail

usage() {
    cat <<USAGE
Usage: $(basename "$0") [-s "SCHED_A SCHED_B"] [-p PROBES] [-l LOADS] [-t SECS] [-n REPEATS]
                        [-w DIR] [-h] [-- MORE RUN OPTIONS]
  -s "A B"    the two schedulers, baseline first (default "mq-deadline none")
  -p PROBES   --probe of both runs (default micro,fileio)
  -l LOADS    --load of both runs (default none,ioseqwrite,iorandread)
  -t SECS     seconds per scenario (default 10)
  -n REPEATS  --repeat of each run (default 3: compare tests every figure)
  -w DIR      --workdir of both runs (default feelbench's); its disk's scheduler is changed
  -h          this help
Prints feelbench's compare table. Runs and logs stay under target/bench-iosched/.
USAGE
}

schedulers="mq-deadline none"
probes=micro,fileio
loads=none,ioseqwrite,iorandread
seconds=10
repeats=3
workdir=""
while getopts ":s:p:l:t:n:w:h" opt; do
    case $opt in
        s) schedulers=$OPTARG ;;
        p) probes=$OPTARG ;;
        l) loads=$OPTARG ;;
        t) seconds=$OPTARG ;;
        n) repeats=$OPTARG ;;
        w) workdir=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
read -r -a pair <<<"$schedulers"
if [ "${#pair[@]}" -ne 2 ]; then
    echo "iosched.sh: -s takes two scheduler names" >&2
    exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "iosched.sh: changing the I/O scheduler needs root" >&2
    exit 2
fi

cd "$(dirname "$0")/.."
cargo build --release -q
feelbench=$PWD/target/release/feelbench
work=$PWD/target/bench-iosched
mkdir -p "$work"

# The whole disk under the work directory (a partition's parent).
source=$(df --output=source "${workdir:-.}" | tail -1)
disk=$(lsblk -no pkname "$source" 2>/dev/null | head -1)
disk=${disk:-$(basename "$source")}
control=/sys/block/$disk/queue/scheduler
if [ ! -w "$control" ]; then
    echo "iosched.sh: no I/O scheduler to set for $source ($control)" >&2
    exit 2
fi
for s in "${pair[@]}"; do
    if ! grep -qw -- "$s" "$control"; then
        echo "iosched.sh: $disk has no scheduler $s (it has: $(cat "$control"))" >&2
        exit 2
    fi
done
original=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$control")
trap 'echo "$original" >"$control"' EXIT
trap 'exit 130' INT TERM HUP

extra=("$@")
if [ -n "$workdir" ]; then
    extra+=(--workdir "$workdir")
fi
for s in "${pair[@]}"; do
    echo "$s" >"$control"
    echo "== $disk: $(cat "$control"); $probes under $loads, -t $seconds --repeat $repeats" >&2
    "$feelbench" run --probe "$probes" --load "$loads" -t "$seconds" --repeat "$repeats" \
        -m "I/O scheduler $s" "${extra[@]}" -o "$work/$s.json" >"$work/$s.out" 2>"$work/$s.err"
done
"$feelbench" compare "$work/${pair[0]}.json" "$work/${pair[1]}.json" --layout rows
