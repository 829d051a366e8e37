# Sourced by bench/watch_overhead.sh and bench/watch_soak.sh, with the
# default seconds and what they are of, then the script's arguments:
#     source "$(dirname "$0")/watch_options.sh" 60 "per watch" "$@"
# Parses -b BUILD (default target/release/feelbench) and -t SECS into
# $build and $secs, answers -h, refuses anything else (exit 2), and leaves
# the shell at the repository's top.
default_secs=$1 secs_of=$2
shift 2

usage() {
    cat <<EOF2
Usage: $(basename "$0") [-b BUILD] [-t SECS]
  -b BUILD  feelbench binary (default target/release/feelbench)
  -t SECS   seconds $secs_of (default $default_secs)
EOF2
}

cd "$(dirname "$0")/.."
build=$PWD/target/release/feelbench secs=$default_secs
while getopts ":b:t:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        t) secs=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
