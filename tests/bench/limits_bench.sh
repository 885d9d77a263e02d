#!/usr/bin/env bash
# Benchmark of the rate-limit check (engine/limits, schema/redis/buckets.lua; not a CTest test).
# In one run, against one throwaway Redis (deploy/dev-services.sh, its own directory):
#   1. limits_bench: limiter::take with 1 and with 16 concurrent callers (threads sharing one
#      limiter, each on its own account, every check on the full path: key GCRA bucket, both
#      cooldowns, day and week counters, campaign cap, pacing): us per check p50/p99, checks/s;
#      then limiter::take_many with batches of BATCH checks (one pipelined round trip per batch,
#      as the worker asks per claimed batch), 1 and 16 callers: p50/p99 are per batch there;
#   2. redis-benchmark replaying the same EVALSHA (same script, keys and arguments) with 1 and 16
#      connections, and pipelined (16 connections x 16);
#   3. redis-benchmark running a minimal GCRA script (gcra_reference.lua), pipelined: the ceiling;
#      the pipelined runs of 2. and 3. alternate ROUNDS times and each round's ratio is printed.
# Redis CPU per check = (used_cpu_sys + used_cpu_user) delta / checks; "script" = the time Redis
# spends inside the script (INFO commandstats, usec per EVALSHA), i.e. without networking.
# Targets (issue 6): one round trip per check, p99 < 1 ms, < 15 us of Redis CPU per check.
#
# Usage: tests/bench/limits_bench.sh [BUILD_DIR]
#   env: DURATION_S=5 (limits_bench runs)  REQUESTS=200000 (redis-benchmark runs)  BATCH=100
#        ROUNDS=3 (interleaved pipelined runs of the script and the reference)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
duration_s="${DURATION_S:-5}"
requests="${REQUESTS:-200000}"
batch="${BATCH:-100}"
rounds="${ROUNDS:-3}"
work="$(mktemp -d /tmp/orch-limits-bench-XXXXXX)"
cleanup() {
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

command -v redis-benchmark >/dev/null || { echo "redis-benchmark is missing: run deploy/install-deps.sh" >&2; exit 1; }
[ -x "$build/bin/limits_bench" ] || { echo "$build/bin/limits_bench is missing: build it first" >&2; exit 1; }

services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"  # a failed start stops the script
eval "$services_env"
port="${REDIS_URL##*:}"
port="${port%%/*}"
cli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
cpu_s() { cli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.6f", s}'; }
script_usec() { cli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=[0-9]*,usec=\([0-9]*\),.*/\1/p'; }

rows=()
batch_notes=()
row() { rows+=("$(printf '| %-56s | %9s | %8s | %8s | %10s | %8s |' "$@")"); }

# 1. The C++ limiter.
for callers in 1 16; do
    line="$("$build/bin/limits_bench" --redis-url "$REDIS_URL" --callers "$callers" --duration-s "$duration_s")"
    get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    row "limiter::take, $callers caller(s), 1 round trip each" "$(get checks_per_s)" "$(get p50_us)" "$(get p99_us)" \
        "$(get redis_cpu_us_per_check)" "$(get script_us_per_check)"
done
for callers in 1 16; do
    line="$("$build/bin/limits_bench" --redis-url "$REDIS_URL" --callers "$callers" --duration-s "$duration_s" \
        --batch "$batch")"
    get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    row "take_many x$batch, $callers caller(s), p50/p99 per batch" "$(get checks_per_s)" "$(get p50_us)" \
        "$(get p99_us)" "$(get redis_cpu_us_per_check)" "$(get script_us_per_check)"
    batch_notes+=("take_many x$batch, $callers caller(s): $(get per_check_us) us per check (p50 of a batch / $batch)")
done

# 2. and 3. redis-benchmark: the same EVALSHA, then the reference GCRA script.
# The take's last argument is binary (its numbers packed): redis-benchmark reads it from stdin (-x).
mapfile -t take_cmd < <("$build/bin/limits_bench" --redis-url "$REDIS_URL" --print-command "$work/take.arg")
[ "${#take_cmd[@]}" -gt 0 ] || { echo "limits_bench --print-command failed" >&2; exit 1; }
# The same check without a campaign cap (campaigns that set no per-account limits): the script
# skips the campaign's counters. Same script and keys; only the packed argument differs.
mapfile -t nocap_cmd < <("$build/bin/limits_bench" --redis-url "$REDIS_URL" --no-campaign-cap \
    --print-command "$work/take-nocap.arg")
[ "${#nocap_cmd[@]}" -gt 0 ] || { echo "limits_bench --print-command --no-campaign-cap failed" >&2; exit 1; }
ref_sha="$(cli SCRIPT LOAD "$(cat "$repo/tests/bench/gcra_reference.lua")")"
bench() {  # label clients pipeline stdin-file|- command...
    local label="$1" clients="$2" pipeline="$3" stdin="$4"
    shift 4
    cli CONFIG RESETSTAT >/dev/null
    local before after csv
    before="$(cpu_s)"
    if [ "$stdin" = - ]; then
        csv="$(redis-benchmark -h 127.0.0.1 -p "$port" -n "$requests" -c "$clients" -P "$pipeline" --csv "$@" 2>/dev/null | tail -n 1)"
    else
        csv="$(redis-benchmark -h 127.0.0.1 -p "$port" -n "$requests" -c "$clients" -P "$pipeline" --csv -x "$@" <"$stdin" 2>/dev/null | tail -n 1)"
    fi
    local errors
    errors="$(cli INFO errorstats | tr -d '\r' | awk -F'count=' '/^errorstat_/ {s += $2} END {print s + 0}')"
    if [ "$errors" != 0 ]; then
        echo "$label: Redis answered $errors error(s): $(cli INFO errorstats | tr -d '\r' | tail -n +2 | paste -sd' ')" >&2
        exit 1
    fi
    after="$(cpu_s)"
    # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    local rps p50 p99 cpu script
    rps="$(echo "$csv" | awk -F'","' '{printf "%.0f", $2}')"
    p50="$(echo "$csv" | awk -F'","' '{printf "%.1f", $5 * 1000}')"
    p99="$(echo "$csv" | awk -F'","' '{printf "%.1f", $7 * 1000}')"
    cpu="$(awk -v a="$before" -v b="$after" -v n="$requests" 'BEGIN {printf "%.2f", (b - a) * 1e6 / n}')"
    script="$(awk -v u="$(script_usec)" -v n="$requests" 'BEGIN {printf "%.2f", u / n}')"
    row "$label" "$rps" "$p50" "$p99" "$cpu" "$script"
    last_cpu="$cpu"
}
bench "redis-benchmark, same EVALSHA, 1 connection" 1 1 "$work/take.arg" "${take_cmd[@]}"
bench "redis-benchmark, same EVALSHA, 16 connections" 16 1 "$work/take.arg" "${take_cmd[@]}"
# The machine's speed drifts by tens of percent within a minute: the script and the reference
# GCRA script run interleaved, ROUNDS times, and each round's ratio of Redis CPU is kept.
ratios=()
nocap_ratios=()
for round in $(seq "$rounds"); do
    bench "redis-benchmark, same EVALSHA, 16 conn. x16 pipe ($round)" 16 16 "$work/take.arg" "${take_cmd[@]}"
    ours="$last_cpu"
    bench "  the same, no campaign cap, 16 conn. x16 pipe ($round)" 16 16 "$work/take-nocap.arg" "${nocap_cmd[@]}"
    nocap="$last_cpu"
    bench "redis-benchmark, reference GCRA, 16 conn. x16 pipe ($round)" 16 16 - EVALSHA "$ref_sha" 1 bench:gcra 1 1000000000
    ratios+=("$(awk -v a="$ours" -v b="$last_cpu" 'BEGIN {printf "%.2f", a / b}')")
    nocap_ratios+=("$(awk -v a="$nocap" -v b="$last_cpu" 'BEGIN {printf "%.2f", a / b}')")
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
bench "redis-benchmark, reference GCRA, 1 connection" 1 1 - EVALSHA "$ref_sha" 1 bench:gcra 1 1000000000

echo
echo "Rate-limit check, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '| %-56s | %9s | %8s | %8s | %10s | %8s |\n' "run" "checks/s" "p50 us" "p99 us" "Redis CPU" "script"
printf '| %-56s | %9s | %8s | %8s | %10s | %8s |\n' "" "" "" "" "us/check" "us/check"
printf '|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..58})" "-----------" "----------" "----------" "------------" "----------"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${batch_notes[@]}"
echo "Redis CPU per check, this script / reference GCRA script, pipelined, interleaved rounds:" \
     "${ratios[*]} (median $(median "${ratios[@]}")); without a campaign cap: ${nocap_ratios[*]}" \
     "(median $(median "${nocap_ratios[@]}"))"
