# Sourced by bench/ab_*.sh: one `feelbench ab` experiment, and reading its
# document. Not run by itself.

# experiment DIR ARGS...: runs `feelbench ab ARGS --dir DIR` with the build
# (quiet, no store, the fixed work-loop rate so nothing calibrates), unless
# DIR holds a finished experiment already; its stderr in DIR.log.
experiment() {
    local dir=$1; shift
    [[ -f $dir/experiment.json ]] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$dir/experiment.json')).get('analysis') else 1)" && return
    rm -rf "$dir"
    "$build" ab -q --no-store -l 200000 --warmup 0.2 --noise-check 0 --dir "$dir" --format json "$@" \
        >"$dir.json.out" 2>"$dir.log" || { echo "experiment $dir failed:" >&2; tail -3 "$dir.log" >&2; }
}

# called DIR: prints "comparisons called raw_p_below_alpha" of the experiment
# in DIR, over the comparisons of the slots named in $slots (all when empty).
called() {
    python3 - "$1/experiment.json" "${slots:-}" "$alpha" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
wanted = set(sys.argv[2].split(",")) - {""}
alpha = float(sys.argv[3])
names = [s["name"] for s in e["slots"]]
tests = called = raw = 0
for s in e["analysis"]["scenarios"]:
    for f in s["figures"]:
        for c in f["comparisons"]:
            if wanted and names[c["slot"]] not in wanted:
                continue
            tests += 1
            called += c["verdict"] != "unchanged"
            raw += c["p"] <= alpha
print(tests, called, raw)
PY
}
