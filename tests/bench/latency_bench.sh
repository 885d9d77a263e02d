#!/usr/bin/env bash
# Benchmark of event latency (not a CTest test): the time from the sandbox emitting an
# accepted_invitation webhook to the follow-up send_message request reaching it, through the
# whole chain: delivery to `orchestrator serve` (custom mode, signed), signature check, inbox
# insert + wake + NOTIFY, the worker's LISTEN wake-up, claim, decide, intent commit, the call.
# Both times come from the sandbox's clock (event created_at, message at; millisecond
# resolution), so the figure includes the sandbox's own delivery queue.
#
# Runs twice on fresh databases: synchronous_commit on and off (set for every orchestrator
# connection with PGOPTIONS). Acceptances are spread over ACCEPT_SPREAD_MS so they arrive one by
# one, as in real use.
#
# Usage: tests/bench/latency_bench.sh [BUILD_DIR]
#   env: LEADS=300 ACCEPT_SPREAD_MS=20000
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
leads="${LEADS:-300}"
spread="${ACCEPT_SPREAD_MS:-20000}"
work="$(mktemp -d /tmp/orch-latency-bench-XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"  # a failed start stops the script
eval "$services_env"
admin_url="$DATABASE_URL"
orch="$build/bin/orchestrator"
export ORCH_INVITE_PER_DAY=-1 ORCH_INVITE_PER_WEEK=-1 ORCH_SEND_PER_DAY=-1 ORCH_PACING=false \
       ORCH_KEY_REQUESTS_PER_MINUTE=60000000 ORCH_KEY_BURST=1000000
# serve stores the webhooks' signing secrets encrypted under this key (a fresh one per run).
export ORCH_SECRET_KEY="${ORCH_SECRET_KEY:-$(openssl rand -hex 32)}"

free_port() {
    local p
    while :; do
        p=$(( 20000 + RANDOM % 40000 ))
        [ -z "$(ss -Htln "sport = :$p")" ] && { echo "$p"; return; }
    done
}

run_mode() {  # $1 = on|off; prints "p50 p95 p99 max count"
    local mode=$1 db="latency_$1"
    rm -f "$work/ready.json"
    "$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
        --api-key bench:100000000 --accept-probability 1 --accept-delay-ms-min 200 \
        --accept-delay-ms-max "$spread" --reply-probability 0 >"$work/sandbox-$mode.log" 2>&1 &
    local sandbox=$!
    pids+=("$sandbox")
    for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
    export OUTREACH_API_URL="http://127.0.0.1:$(jq -r .port "$work/ready.json")" OUTREACH_API_KEY=bench
    local control="http://127.0.0.1:$(jq -r .control_port "$work/ready.json")"
    psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
    export DATABASE_URL="${admin_url%/*}/$db" PGOPTIONS="-c synchronous_commit=$mode"
    "$orch" migrate >/dev/null
    for i in 1 2 3; do "$orch" accounts connect --login-token "lat-$i" --label "sender-$i" >/dev/null; done
    cat >"$work/latency.yaml" <<YAML
name: latency
accounts: [sender-1, sender-2, sender-3]
audience: {search: {title: Engineer}, total_results: $leads}
schedule: {time_zone: UTC, days: [mon, tue, wed, thu, fri, sat, sun], hours: "00:00-24:00"}
budget_credits: 100000000
steps:
  - {id: check, kind: check_invitation, on_accepted: end, on_pending: end, on_no_invitation: invite}
  - {id: invite, kind: invite}
  - {id: wait, kind: wait_accepted, timeout: 1h, next: thanks, on_timeout: end}
  - {id: thanks, kind: send, message_text: "Thanks for connecting, {{first_name}}!"}
YAML
    "$orch" campaign apply "$work/latency.yaml" >/dev/null
    local port
    port="$(free_port)"
    "$orch" serve --webhook-listen "127.0.0.1:$port" --webhook-public-url "http://127.0.0.1:$port/webhooks" \
        >"$work/serve-$mode.log" 2>&1 &
    local serve=$!
    pids+=("$serve")
    local hooked=0
    for _ in $(seq 1 200); do
        [ "$(psql -At "$DATABASE_URL" -c "SELECT count(*) FROM accounts WHERE webhook_id IS NOT NULL")" = 3 ] && { hooked=1; break; }
        kill -0 "$serve" 2>/dev/null || break
        sleep 0.05
    done
    # Without serve no acceptance arrives and the worker would wait for the timeouts (an hour).
    if [ "$hooked" != 1 ] || ! kill -0 "$serve" 2>/dev/null; then
        echo "latency benchmark: serve did not start or register its webhooks:" >&2
        tail -n 5 "$work/serve-$mode.log" >&2
        exit 1
    fi
    "$orch" worker --exit-when-idle >"$work/worker-$mode.log" 2>&1
    # Pair each acceptance with the message to the same person from the same account.
    ms='(capture("^(?<s>.*)\\.(?<ms>[0-9]+)Z$") | ((.s + "Z") | fromdateiso8601) * 1000 + (.ms | tonumber))'
    curl -sS "$control/control/events" >"$work/events-$mode.json"
    curl -sS "$control/control/side-effects" >"$work/effects-$mode.json"
    kill "$serve" "$sandbox" 2>/dev/null || true
    wait "$serve" "$sandbox" 2>/dev/null || true
    jq -n --slurpfile ev "$work/events-$mode.json" --slurpfile fx "$work/effects-$mode.json" -r "
        (\$ev[0].events | map(select(.type == \"accepted_invitation\"))
            | map({key: (.account_id + \" \" + (.payload.event.profile_url // .payload.profile_url)), value: (.created_at | $ms)}) | from_entries) as \$acc
        | \$fx[0].messages[] | select(\$acc[.account_id + \" \" + .profile_url] != null)
        | (.at | $ms) - \$acc[.account_id + \" \" + .profile_url]" | sort -n >"$work/lat-$mode.txt"
    awk '{a[NR] = $1} END {
        if (NR == 0) { print "- - - - 0"; exit }
        printf "%d %d %d %d %d\n", a[int(NR * 0.50 + 0.5)], a[int(NR * 0.95 + 0.5)], a[int(NR * 0.99 + 0.5)], a[NR], NR }' \
        "$work/lat-$mode.txt"
}

read -r on50 on95 on99 onmax onn < <(run_mode on)
read -r off50 off95 off99 offmax offn < <(run_mode off)
echo "event latency: accepted_invitation webhook -> follow-up send_message, $leads leads, acceptances spread over ${spread} ms"
printf '%-32s %8s %8s %8s %8s %8s\n' "" "p50 ms" "p95 ms" "p99 ms" "max ms" "events"
printf '%-32s %8s %8s %8s %8s %8s\n' "synchronous_commit on" "$on50" "$on95" "$on99" "$onmax" "$onn"
printf '%-32s %8s %8s %8s %8s %8s\n' "synchronous_commit off" "$off50" "$off95" "$off99" "$offmax" "$offn"
echo "(target: p99 under 25 ms with synchronous_commit off)"
