#!/usr/bin/env bash
# Benchmark, not a test: what a default run covering every seed system costs in
# wall time, and whether it has the power to call the standard differences.
# Times each candidate group of scenarios (one `feelbench run` each) with the
# load average before it, and compares two sets of runs group by group.
set -euo pipefail

usage() {
    cat <<EOF
Usage: $(basename "$0") [-s candidates|proposal] [-N NICE] [-o DIR] [-g NAMES] [-h]
       $(basename "$0") -C BASE_DIR OTHER_DIR [-a ALPHA]
  -s SET     candidates: every candidate group (fixed costs, periodic probes at -t 3 and 6,
             response, job, fragment, micro, fileio under several loads; about 9 minutes);
             proposal: the proposed default set (default candidates)
  -N NICE    nice of the loads (--load-nice; default 0)
  -o DIR     where runs and logs go (default target/bench/default_budget/SET-nNICE-TIMESTAMP)
  -g NAMES   only these groups (comma-separated names from the set)
  -C A B     compare the runs of two directories made with the same set, group by group
             (feelbench compare A/G.json B/G.json), and count the figures marked
             significant against the tests made (--alpha, default 0.01)
  -h         this help
Prints per group: wall seconds of the whole \`feelbench run\` (start-up, calibration, noise
check, file creation, warm-ups and measuring), the scenarios it ran and the 1-minute load
average before it (other work on the machine disturbs latency figures, not wall time much).
EOF
}

# The candidate groups: name and the arguments of `feelbench run`.
candidates() {
    cat <<'EOF'
fixed_t1	--probe x --load none -t 1
fixed_t1_nonoise	--probe x --load none -t 1 --noise-check 0
periodic_t3	--probe x,audio,video,gaming --load none,burn -t 3
periodic_t6	--probe x,audio,video,gaming --load none,burn -t 6
read_default_size	--probe x --load read -t 3
read_256M	--probe x --load read -t 3 --file-size 256M
write_256M	--probe x --load write -t 3 --file-size 256M
periodic_loads_t3	--probe x,audio,video,gaming --load video,x,write,read,hack,spawn -t 3 --file-size 256M
response_g3p3	--probe response --load none,spawn,cpuload,write --response-gap 3 --response-points 3 --file-size 256M
job_s0.1_r3	--probe job --load none,burn,hack,write --job-size 0.1 --repeat 3 --file-size 256M
fragment_t3	--probe fragment --load none,burn,hack,x,write -t 3 --file-size 256M
micro_t3	--probe micro --load none,burn,hack,spawn,write -t 3 --file-size 256M
fileio_t3	--probe fileio --load none,burn,write,read -t 3 --file-size 256M
EOF
}

# The proposed default set (see bench/default_budget.md).
proposal() {
    cat <<'EOF'
periodic	--probe x,audio,video,gaming --load none,burn,hack,video,write -t 4 --file-size 256M
response	--probe response --load none,cpuload,write --response-gap 2 --response-points 3 --repeat 3 --file-size 256M
job	--probe job --load none,burn,write --job-size 0.05 --repeat 3 --file-size 256M
fragment	--probe fragment --load none,burn,hack,write -t 3 --file-size 256M
micro	--probe micro --load none,burn,hack,write -t 3 --file-size 256M
fileio	--probe fileio --load none,burn,write -t 3 --file-size 256M
EOF
}

set_name=candidates
nice=0
out=""
only=""
alpha=0.01
compare_dirs=()
while getopts ":s:N:o:g:C:a:h" opt; do
    case $opt in
        s) set_name=$OPTARG ;;
        N) nice=$OPTARG ;;
        o) out=$OPTARG ;;
        g) only=$OPTARG ;;
        C) compare_dirs=("$OPTARG") ;;
        a) alpha=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
case $set_name in
    candidates | proposal) ;;
    *) echo "default_budget.sh: -s takes candidates or proposal" >&2; exit 2 ;;
esac
[[ $nice =~ ^-?[0-9]+$ ]] || { echo "default_budget.sh: -N takes a nice value" >&2; exit 2; }

cd "$(dirname "$0")/.."
feelbench=$PWD/target/release/feelbench
[[ -x $feelbench ]] || { echo "default_budget.sh: build first: cargo build --release" >&2; exit 2; }

# Compare mode: per group present in both directories, the marks and tests.
if ((${#compare_dirs[@]})); then
    [[ $# -eq 1 ]] || { echo "default_budget.sh: -C takes two directories" >&2; exit 2; }
    compare_dirs+=("$1")
    total_tests=0
    total_marks=0
    for a in "${compare_dirs[0]}"/*.json; do
        g=$(basename "$a" .json)
        b=${compare_dirs[1]}/$g.json
        [[ -f $b ]] || continue
        "$feelbench" compare "$a" "$b" --alpha "$alpha" >"${compare_dirs[1]}/$g.compare.txt" || true
        tests=$(grep -oE '^[0-9]+ tests at alpha' "${compare_dirs[1]}/$g.compare.txt" | grep -oE '^[0-9]+' || echo 0)
        # Figures' marks (what "N tests at alpha" counts), then the late causes' apart.
        marked=$(awk '/^probe +load +figure/ { f = 1 } /^probe +load +late for/ { f = 0 }
            f && / (better|worse)$/' "${compare_dirs[1]}/$g.compare.txt")
        late=$(awk '/^probe +load +late for/ { f = 1 } /^probe +load +figure/ { f = 0 }
            f && / (better|worse)$/' "${compare_dirs[1]}/$g.compare.txt")
        marks=$(grep -c . <<<"$marked" || true)
        printf '%-12s tests %3d  marked %3d  expected %.2f  (late-cause rows marked: %d)\n' "$g" \
            "$tests" "$marks" "$(awk -v t="$tests" -v a="$alpha" 'BEGIN { print t * a }')" \
            "$(grep -c . <<<"$late" || true)"
        if [[ -n $marked ]]; then sed 's/^/    /' <<<"$marked"; fi
        total_tests=$((total_tests + tests))
        total_marks=$((total_marks + marks))
    done
    printf 'all          tests %3d  marked %3d  expected %.2f (alpha %s)\n' "$total_tests" \
        "$total_marks" "$(awk -v t="$total_tests" -v a="$alpha" 'BEGIN { print t * a }')" "$alpha"
    exit 0
fi

[[ -n $out ]] || out=$PWD/target/bench/default_budget/$set_name-n$nice-$(date -u +%Y%m%dT%H%M%S)
mkdir -p "$out"
echo "runs and logs in $out"
printf '%-20s %8s %9s %6s  %s\n' group wall_s scenarios load1 arguments
total=0
while IFS=$'\t' read -r name args; do
    if [[ -n $only && ,$only, != *",$name,"* ]]; then continue; fi
    read -r -a argv <<<"$args"
    load1=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    status=0
    "$feelbench" run -q --load-nice "$nice" "${argv[@]}" -m "$name nice $nice" \
        -o "$out/$name.json" >"$out/$name.log" 2>&1 || status=$?
    end=$(date +%s.%N)
    wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
    scenarios=$(jq '.scenarios | length' "$out/$name.json" 2>/dev/null || echo 0)
    note=""
    ((status == 0)) || note="  (exit $status: see $out/$name.log)"
    printf '%-20s %8s %9s %6s  %s%s\n' "$name" "$wall" "$scenarios" "$load1" "$args" "$note"
    total=$(awk -v t="$total" -v w="$wall" 'BEGIN { print t + w }')
done < <($set_name)
printf '%-20s %8.1f\n' total "$total"
