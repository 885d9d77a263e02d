#!/usr/bin/env bash
# Saturated-quota benchmark (issue 6: "in a saturated run, at least 95% of the configured quota
# used with zero violations"; not a CTest test). Against one throwaway Redis
# (deploy/dev-services.sh, its own directory), quota_saturation_bench races CALLERS threads on
# limiter::take for ACCOUNTS accounts with a day quota of QUOTA:
#   1. pacing on, over a working window of WINDOW_S seconds (+ GRACE_S), one account;
#   2. the same with 3 accounts;
#   3. pacing on, 16 accounts with one caller each: 16 account-days of one window, to see the
#      spread of the % used (pacing's random gaps may not all fit in the window);
#   4. pacing off (the whole quota at once), one account.
# Each run prints allowed vs quota (% used), denials by reason, the smallest gap between two
# allowed takes of an account, and the violations (over quota; pacing gap below the minimum).
#
# Usage: tests/bench/quota_saturation_bench.sh [BUILD_DIR]
#   env: QUOTA=100 WINDOW_S=60 GRACE_S=5 CALLERS=16
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
quota="${QUOTA:-100}"
window_s="${WINDOW_S:-60}"
grace_s="${GRACE_S:-5}"
callers="${CALLERS:-16}"
bin="$build/bin/quota_saturation_bench"
work="$(mktemp -d /tmp/orch-quota-bench-XXXXXX)"
cleanup() {
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

[ -x "$bin" ] || { echo "$bin is missing: build it first (cmake --build build --target quota_saturation_bench)" >&2; exit 1; }

# Not eval "$(...)": a failed start would be hidden and the runs would go on without Redis.
if ! "$repo/deploy/dev-services.sh" start --dir "$work/services" >"$work/env" 2>"$work/start.log"; then
    echo "the services did not start:" >&2
    cat "$work/start.log" >&2
    exit 1
fi
# shellcheck disable=SC1091
. "$work/env"

status=0
run() {  # label args...
    local label="$1"
    shift
    echo "== $label"
    if ! "$bin" --redis-url "$REDIS_URL" --callers "$callers" --quota "$quota" --window-s "$window_s" \
        --grace-s "$grace_s" "$@"; then
        status=1
    fi
}
echo "Quota saturation, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
run "pacing on, 1 account" --accounts 1 --pacing on
run "pacing on, 3 accounts" --accounts 3 --pacing on
run "pacing on, 16 accounts, 1 caller each" --accounts 16 --callers 16 --pacing on
run "pacing off, 1 account (a 3 s run: no window to wait for)" --accounts 1 --pacing off --window-s 2 --grace-s 1
exit $status
