#!/usr/bin/env bash
# Benchmark of the outreach client (engine/outreach) against the sandbox (not a CTest test).
# In one run, against one sandbox process and the same endpoint (POST /v2/network
# check_invitation over keep-alive connections):
#   1. wrk (one thread, CONNECTIONS connections, a Lua POST script): the ceiling;
#   2. outreach_client_bench (one io_context thread, CONNECTIONS pooled connections, IN_FLIGHT
#      calls in flight): requests/s and client CPU per request (getrusage).
# Target (issue 4): client >= 80% of wrk's rate with at most 64 connections, < 50 us CPU/request.
#
# Usage: tests/bench/client_bench.sh [BUILD_DIR]
#   env: DURATION_S=10 CONNECTIONS=64 IN_FLIGHT=64
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
duration_s="${DURATION_S:-10}"
connections="${CONNECTIONS:-64}"
in_flight="${IN_FLIGHT:-64}"
work="$(mktemp -d /tmp/orch-client-bench-XXXXXX)"
sandbox_pid=""
cleanup() {
    [ -n "$sandbox_pid" ] && kill "$sandbox_pid" 2>/dev/null || true
    sleep 0.2
    rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk is missing: run deploy/install-deps.sh" >&2; exit 1; }
for bin in outreach-sandbox outreach_client_bench; do
    [ -x "$build/bin/$bin" ] || { echo "$build/bin/$bin is missing: build it first" >&2; exit 1; }
done

"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key bench-key:1000000000000 --request-log-max 0 >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
[ -s "$work/ready.json" ] || { echo "the sandbox did not start:"; cat "$work/sandbox.log"; exit 1; } >&2
port="$(sed -E 's/.*"port":([0-9]+).*/\1/' "$work/ready.json")"
control="$(sed -E 's/.*"control_port":([0-9]+).*/\1/' "$work/ready.json")"
api="http://127.0.0.1:$port"
account="$(curl -sS -X POST "$api/v2/login" -H 'x-api-key: bench-key' \
    -d '{"platform":"network","country":"FR","login_token":"bench"}' | sed -E 's/.*"account_id":"([^"]+)".*/\1/')"
profile="$(curl -sS "http://127.0.0.1:$control/control/people?offset=500&limit=1" | sed -E 's/.*"profile_url":"([^"]+)".*/\1/')"
body="{\"account_id\":\"$account\",\"action\":\"check_invitation\",\"params\":{\"profile_url\":\"$profile\"}}"
cat > "$work/check.lua" <<LUA
wrk.method = "POST"
wrk.headers["x-api-key"] = "bench-key"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA
curl -sS -X POST "$api/v2/network" -H 'x-api-key: bench-key' -d "$body" | grep -q '"success":true' ||
    { echo "bench: check_invitation fails against the sandbox" >&2; exit 1; }

wrk -t1 -c"$connections" -d"${duration_s}s" --latency -s "$work/check.lua" "$api/v2/network" >"$work/wrk.txt"
wrk_rate="$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")"
wrk_errors="$(grep -h -E 'Non-2xx|Socket errors' "$work/wrk.txt" || true)"

"$build/bin/outreach_client_bench" --base-url "$api" --api-key bench-key --account "$account" --profile "$profile" \
    --connections "$connections" --in-flight "$in_flight" --duration-s "$duration_s" >"$work/client.txt" || true
client_line="$(grep requests_per_s "$work/client.txt" || true)"
[ -n "$client_line" ] || { echo "the client benchmark failed:"; cat "$work/client.txt"; exit 1; } >&2
field() { sed -E "s/.*$1=([0-9.]+).*/\1/" <<<"$client_line"; }
client_rate="$(field requests_per_s)"
client_cpu="$(field cpu_us_per_request)"
client_errors="$(field errors)"

echo "outreach client benchmark: check_invitation, $connections connections, ${duration_s}s each, $(nproc) cores"
printf '%-44s %12s\n' "wrk -t1 -c$connections (ceiling)" "$wrk_rate req/s"
printf '%-44s %12s\n' "client, 1 thread, $in_flight in flight" "$client_rate req/s"
ratio="$(awk -v c="$client_rate" -v w="$wrk_rate" 'BEGIN { printf "%.1f", (w > 0 ? 100 * c / w : 0) }')"
printf '%-44s %12s\n' "client / wrk" "$ratio %"
printf '%-44s %12s\n' "client CPU per request (user+sys)" "$client_cpu us"
printf '%-44s %12s\n' "client errors" "$client_errors"
grep -q "first error" "$work/client.txt" && grep "first error" "$work/client.txt"
[ -z "$wrk_errors" ] || { echo "wrk errors:"; echo "$wrk_errors"; }
awk -v r="$ratio" -v cpu="$client_cpu" 'BEGIN {
    print "target (>= 80% of wrk): " (r + 0 >= 80 ? "met" : "NOT met");
    print "target (< 50 us CPU/request): " (cpu + 0 < 50 ? "met" : "NOT met") }'
