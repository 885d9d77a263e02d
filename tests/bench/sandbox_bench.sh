#!/usr/bin/env bash
# Benchmark of outreach-sandbox under wrk (not a CTest test). In one run it measures:
#   1. the ceiling: nginx returning a fixed JSON body on loopback, under the same wrk settings;
#   2. the sandbox's own HTTP stack on GET /healthz (fixed body, no JSON parse);
#   3. POST /v2/network check_invitation (the orchestrator's hottest call);
#   4. POST /v2/profiles search_people (25 results out of 10,000 people, with filters).
# Target (issue 2): at least 20,000 check_invitation requests/s on the 2-core machine.
#
# Usage: tests/bench/sandbox_bench.sh [BUILD_DIR]   env: DURATION=10s CONNECTIONS=64 THREADS=1
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"
threads="${THREADS:-1}"
work="$(mktemp -d /tmp/orch-bench-XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    sleep 0.2
    rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk is missing: run deploy/install-deps.sh" >&2; exit 1; }
if ! command -v nginx >/dev/null; then
    apt-get install -y -q --no-install-recommends nginx-light >/dev/null
fi

free_port() {
    local p
    while :; do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        [ -z "$(ss -Htln "sport = :$p")" ] && { echo "$p"; return; }
    done
}

rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
latency() { awk '/^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {print p50 " / " p99}' "$1"; }

# 1. nginx ceiling: one worker (the sandbox runs one thread too), fixed body.
nginx_port="$(free_port)"
mkdir -p "$work/nginx"
cat > "$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx;
    proxy_temp_path $work/nginx;
    fastcgi_temp_path $work/nginx;
    uwsgi_temp_path $work/nginx;
    scgi_temp_path $work/nginx;
    server {
        listen 127.0.0.1:$nginx_port;
        keepalive_requests 1000000;
        location / { default_type application/json; return 200 '{"success":true,"data":{"invitation_state":"PENDING"}}'; }
    }
}
NGINX
nginx -c "$work/nginx.conf"
sleep 0.3

"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key bench-key:1000000000000 --request-log-max 0 >"$work/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
port="$(sed -E 's/.*"port":([0-9]+).*/\1/' "$work/ready.json")"
control="$(sed -E 's/.*"control_port":([0-9]+).*/\1/' "$work/ready.json")"
api="http://127.0.0.1:$port"
account="$(curl -sS -X POST "$api/v2/login" -H 'x-api-key: bench-key' \
    -d '{"platform":"network","country":"FR","login_token":"bench"}' | sed -E 's/.*"account_id":"([^"]+)".*/\1/')"
profile="$(curl -sS "http://127.0.0.1:$control/control/people?offset=500&limit=1" | sed -E 's/.*"profile_url":"([^"]+)".*/\1/')"

lua() { # $1 category, $2 JSON body
    cat > "$work/$1.lua" <<LUA
wrk.method = "POST"
wrk.headers["x-api-key"] = "bench-key"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$2'
LUA
}
lua network "{\"account_id\":\"$account\",\"action\":\"check_invitation\",\"params\":{\"profile_url\":\"$profile\"}}"
lua profiles "{\"account_id\":\"$account\",\"action\":\"search_people\",\"params\":{\"keyword\":\"a\",\"location\":[\"France\",\"Germany\"],\"total_results\":25}}"

# Sanity: both bodies succeed before measuring.
for c in network profiles; do
    body="$(sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$work/$c.lua")"
    curl -sS -X POST "$api/v2/$c" -H 'x-api-key: bench-key' -d "$body" | grep -q '"success":true' ||
        { echo "bench: /v2/$c request fails" >&2; exit 1; }
done

run() { # $1 name, rest: wrk args
    local name="$1"; shift
    wrk -t"$threads" -c"$connections" -d"$duration" --latency "$@" >"$work/$name.txt"
}
run nginx "http://127.0.0.1:$nginx_port/"
run healthz "$api/healthz"
run check_invitation -s "$work/network.lua" "$api/v2/network"
run search_people -s "$work/profiles.lua" "$api/v2/profiles"

errors="$(grep -h -E 'Non-2xx|Socket errors' "$work"/*.txt || true)"
echo "sandbox benchmark: wrk -t$threads -c$connections -d$duration, $(nproc) cores"
printf '%-34s %12s %22s\n' "endpoint" "requests/s" "latency p50 / p99"
printf '%-34s %12s %22s\n' "nginx fixed body (ceiling)" "$(rate "$work/nginx.txt")" "$(latency "$work/nginx.txt")"
printf '%-34s %12s %22s\n' "sandbox GET /healthz" "$(rate "$work/healthz.txt")" "$(latency "$work/healthz.txt")"
printf '%-34s %12s %22s\n' "sandbox check_invitation" "$(rate "$work/check_invitation.txt")" "$(latency "$work/check_invitation.txt")"
printf '%-34s %12s %22s\n' "sandbox search_people (25 of 10k)" "$(rate "$work/search_people.txt")" "$(latency "$work/search_people.txt")"
[ -z "$errors" ] || { echo "errors during the run:"; echo "$errors"; }
ci="$(rate "$work/check_invitation.txt")"
awk -v r="$ci" 'BEGIN { if (r + 0 >= 20000) print "target (>= 20,000 check_invitation/s): met"; else print "target (>= 20,000 check_invitation/s): NOT met" }'
