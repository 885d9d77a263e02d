#!/usr/bin/env bash
# Benchmark of the admin REST endpoint of `orchestrator serve` under wrk (not a CTest test). In one
# run it measures:
#   1. the ceiling: nginx returning a fixed JSON body on loopback, same wrk settings;
#   2. GET /healthz of the admin listener (the HTTP stack alone, no auth, no database);
#   3. GET /v1/campaigns (bearer auth + one Postgres query on the admin's database thread);
#   4. GET /v1/campaigns/bench (campaign + funnel: two queries);
#   5. GET /v1/campaigns/bench/leads?limit=100 (a page of 100 leads as JSON).
# Needs DATABASE_URL (a Postgres where it may create and drop a database) and REDIS_URL: run
# `eval "$(deploy/dev-services.sh start)"` first.
#
# Usage: tests/bench/admin_bench.sh [BUILD_DIR]   env: DURATION=10s CONNECTIONS=64 THREADS=1
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"
threads="${THREADS:-1}"
: "${DATABASE_URL:?DATABASE_URL is not set: eval \"\$(deploy/dev-services.sh start)\" first}"
: "${REDIS_URL:?REDIS_URL is not set}"
work="$(mktemp -d /tmp/orch-admin-bench-XXXXXX)"
db="orch_admin_bench_$$"
admin_url="$DATABASE_URL"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    sleep 0.3
    psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk is missing: run deploy/install-deps.sh" >&2; exit 1; }
command -v nginx >/dev/null || apt-get install -y -q --no-install-recommends nginx-light >/dev/null

free_port() {
    local p
    while :; do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        [ -z "$(ss -Htln "sport = :$p")" ] && { echo "$p"; return; }
    done
}
rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
latency() { awk '/^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {print p50 " / " p99}' "$1"; }

# 1. nginx ceiling: one worker (serve's admin runs on one network thread too).
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
        location / { default_type application/json; return 200 '{"campaigns":[{"name":"bench","state":"active"}]}'; }
    }
}
NGINX
nginx -c "$work/nginx.conf"

# The sandbox, a database of our own, two accounts and a campaign of 500 leads.
"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key bench-key:1000000000 --request-log-max 0 >"$work/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
port="$(sed -E 's/.*"port":([0-9]+).*/\1/' "$work/ready.json")"
psql -q "$admin_url" -c "CREATE DATABASE $db" >/dev/null
export DATABASE_URL="${admin_url%/*}/$db"
export OUTREACH_API_URL="http://127.0.0.1:$port" OUTREACH_API_KEY=bench-key ORCH_LOG_LEVEL=warn
export ORCH_ADMIN_TOKEN="bench-admin-token-0123456789"
orch="$build/bin/orchestrator"
"$orch" migrate >/dev/null
"$orch" accounts connect --login-token bench-1 --country FR --label sender-1 >/dev/null
"$orch" accounts connect --login-token bench-2 --country FR --label sender-2 >/dev/null
cat > "$work/bench.yaml" <<YAML
name: bench
accounts: [sender-1, sender-2]
audience:
  search: {title: Engineer}
  total_results: 500
schedule: {time_zone: UTC, days: [mon, tue, wed, thu, fri, sat, sun], hours: "00:00-24:00"}
budget_credits: 100000
steps:
  - id: check
    kind: check_invitation
    on_accepted: end
    on_pending: end
    on_no_invitation: end
YAML

admin_port="$(free_port)"
"$orch" serve --webhook-listen "127.0.0.1:$(free_port)" --admin-listen "127.0.0.1:$admin_port" >"$work/serve.log" 2>&1 &
pids+=($!)
admin="http://127.0.0.1:$admin_port"
for _ in $(seq 1 200); do curl -fsS "$admin/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
auth="Authorization: Bearer $ORCH_ADMIN_TOKEN"
curl -fsS -X POST "$admin/v1/campaigns" -H "$auth" -H 'Content-Type: application/yaml' \
    --data-binary "@$work/bench.yaml" >"$work/apply.json" || { echo "bench: apply failed" >&2; cat "$work/serve.log" >&2; exit 1; }
curl -fsS "$admin/v1/campaigns/bench/leads?limit=100" -H "$auth" | grep -q '"next_cursor":"' ||
    { echo "bench: leads page is not full" >&2; exit 1; }

run() { # $1 name, rest: wrk args
    local name="$1"; shift
    wrk -t"$threads" -c"$connections" -d"$duration" --latency "$@" >"$work/$name.txt"
}
run nginx "http://127.0.0.1:$nginx_port/"
run healthz "$admin/healthz"
run campaigns -H "$auth" "$admin/v1/campaigns"
run campaign -H "$auth" "$admin/v1/campaigns/bench"
run leads -H "$auth" "$admin/v1/campaigns/bench/leads?limit=100"

errors="$(grep -h -E 'Non-2xx|Socket errors' "$work"/*.txt || true)"
echo "admin endpoint benchmark: wrk -t$threads -c$connections -d$duration, $(nproc) cores; campaign of 500 leads"
printf '%-42s %12s %22s\n' "endpoint" "requests/s" "latency p50 / p99"
printf '%-42s %12s %22s\n' "nginx fixed body (ceiling)" "$(rate "$work/nginx.txt")" "$(latency "$work/nginx.txt")"
printf '%-42s %12s %22s\n' "admin GET /healthz" "$(rate "$work/healthz.txt")" "$(latency "$work/healthz.txt")"
printf '%-42s %12s %22s\n' "admin GET /v1/campaigns" "$(rate "$work/campaigns.txt")" "$(latency "$work/campaigns.txt")"
printf '%-42s %12s %22s\n' "admin GET /v1/campaigns/bench (+funnel)" "$(rate "$work/campaign.txt")" "$(latency "$work/campaign.txt")"
printf '%-42s %12s %22s\n' "admin GET .../leads?limit=100" "$(rate "$work/leads.txt")" "$(latency "$work/leads.txt")"
[ -z "$errors" ] || { echo "errors during the run:"; echo "$errors"; }
