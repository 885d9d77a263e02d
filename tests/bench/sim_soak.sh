#!/usr/bin/env bash
# The long soak of the seeded engine simulation (tests/sim; not a CTest test: sim_test runs
# 1,000 seeds in CI). Runs orch-sim over fresh seeds for SECONDS, three sets in turn:
#   default: 24 leads, 1 to 3 worker processes by seed, every fault of tests/sim/sim.hpp;
#   large:   200 leads per seed;
#   crashy:  3 processes, a crash at 5 % of the await points.
# A failing seed is printed with its violations and replays with `orch-sim --seed N` (with the
# set's options). Exit status 1 when any seed failed.
#
# Usage: tests/bench/sim_soak.sh [BUILD_DIR]
#   env: SECONDS_PER_SET=60 FIRST_SEED=(from the clock)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
bin="$build/bin/orch-sim"
[ -x "$bin" ] || { echo "$bin is missing: build it first" >&2; exit 1; }
per_set="${SECONDS_PER_SET:-60}"
first="${FIRST_SEED:-$(( $(date +%s) % 1000000 * 1000 ))}"
status=0
echo "sim soak: ${per_set} s per set, seeds from $first"
run_set() {
    local name="$1"
    shift
    local out rc=0
    out="$("$bin" --seed "$first" --soak-seconds "$per_set" "$@")" || rc=$?
    # Without --verbose orch-sim prints the failing seeds and its totals: all of it.
    echo "$name (options: ${*:-none}): $out"
    [ "$rc" -eq 0 ] || { status=1; echo "  replay a failing seed N of this set: $bin --seed N $*"; }
}
run_set default
run_set large --leads 200
run_set crashy --processes 3 --crash-rate 0.05
exit "$status"
