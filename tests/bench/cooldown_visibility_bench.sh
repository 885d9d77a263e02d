#!/usr/bin/env bash
# Benchmark of how soon a RATE_LIMITED cooldown written by one worker process holds the calls of
# another (not a CTest test; issue "Rebuild the worker": "other processes see it within a stated
# bound; measure that bound"). Runs cooldown_visibility_bench against a throwaway Redis
# (deploy/dev-services.sh, its own directory): two limits_gate instances, i.e. two mirrors, two
# refresher threads, two sets of Redis connections, as two processes have.
#   account scope: TRIALS trials, each on a fresh account, then again with B having sent for
#                  BACKGROUND more accounts (the refresher reads the index of the scopes cooling
#                  down in one round trip per cycle, so the figure should not move);
#   key scope:     KEY_TRIALS trials, a fresh key (and pair of gates) each.
# Figures: p50/p99/max ms from answered() being called in A to B's first hold, next to the stated
# bound: limits_gate::mirror_refresh (100 ms) + one round trip.
#
# Usage: tests/bench/cooldown_visibility_bench.sh [BUILD_DIR]
#   env: TRIALS=300 KEY_TRIALS=50 BACKGROUND=1000
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
bin="$build/bin/cooldown_visibility_bench"
[ -x "$bin" ] || { echo "$bin is missing: build it first" >&2; exit 1; }
work="$(mktemp -d /tmp/orch-cooldown-bench-XXXXXX)"
cleanup() {
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"  # a failed start stops the script
eval "$services_env"

field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }  # $1 = an output line, $2 = a key
show() {  # $1 = label, $2 = one output line
    printf '| %-46s | %7s | %7s | %7s | %7s | %9s | %7s | %7s |\n' "$1" "$(field "$2" seen)/$(field "$2" trials)" \
        "$(field "$2" p50_ms)" "$(field "$2" p99_ms)" "$(field "$2" max_ms)" "$(field "$2" stated_bound_ms)" \
        "$(field "$2" followed_accounts)" "$(field "$2" index_rtt_ms)"
}
small="$("$bin" --redis-url "$REDIS_URL" --trials "${TRIALS:-300}" --key-trials "${KEY_TRIALS:-50}")"
big="$("$bin" --redis-url "$REDIS_URL" --trials "${TRIALS:-300}" --key-trials 0 --background-accounts "${BACKGROUND:-1000}")"
echo "cross-process visibility of a RATE_LIMITED cooldown (A answered() -> B hold() holds), ms"
printf '| %-46s | %7s | %7s | %7s | %7s | %9s | %7s | %7s |\n' "scope" "seen" "p50" "p99" "max" "bound" "serves" "rtt"
show "account action (B serves the trial accounts)" "$(echo "$small" | grep '^scope=account')"
show "account action (+ ${BACKGROUND:-1000} accounts served)" "$(echo "$big" | grep '^scope=account')"
show "key (a fresh key per trial)" "$(echo "$small" | grep '^scope=key')"
echo "rtt: one read of the cooldown index (ms), measured before the trials;" \
     "A's answered() took $(field "$(echo "$small" | grep '^scope=account')" answered_write_ms) ms on average"
echo "(bound = mirror_refresh 100 ms + one index round trip, whatever the accounts served; A's own mirror holds at once)"
