#!/usr/bin/env bash
# The README's demo command: a real campaign, end to end, on the embedded default.
#   installs dependencies, builds, starts Postgres, Redis and outreach-sandbox (short simulated
#   delays), migrates, connects 3 sandbox accounts, applies deploy/demo-campaign.yaml (the
#   canonical path: search -> check_invitation -> invite -> wait for accepted_invitation -> send,
#   with about 200 leads), runs `orchestrator serve` (signed webhooks) and `orchestrator worker`
#   until every lead has finished, prints the funnel and the credits spent, checks the sandbox's
#   side-effect record for duplicates, and stops everything (also on failure or Ctrl-C).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build="${ORCH_BUILD_DIR:-$repo/build}"
key="demo-key"
credits=100000

./deploy/install-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${ORCH_JOBS:-2}" --target outreach-sandbox orchestrator

work="$(mktemp -d "${TMPDIR:-/tmp}/orch-demo-XXXXXX")"
pids=()
cleanup() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
started=$(date +%s)

# 1. Postgres and Redis (throwaway, loopback), then the sandbox.
# (an assignment, so a failed start stops the script: `eval "$(...)"` alone would ignore it)
services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"
eval "$services_env"
"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key "$key:$credits" --seed 7 \
    --accept-probability 0.7 --accept-delay-ms-min 500 --accept-delay-ms-max 8000 \
    --reply-probability 0.4 --reply-delay-ms-min 500 --reply-delay-ms-max 5000 \
    >"$work/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
[ -s "$work/ready.json" ] || { cat "$work/sandbox.log"; echo "demo: the sandbox did not start" >&2; exit 1; }
export OUTREACH_API_URL="http://127.0.0.1:$(jq -r .port "$work/ready.json")"
export OUTREACH_API_KEY="$key"
control="http://127.0.0.1:$(jq -r .control_port "$work/ready.json")"
echo "demo: outreach-sandbox on $OUTREACH_API_URL, Postgres and Redis from deploy/dev-services.sh"

orch="$build/bin/orchestrator"
# Demo settings: the real per-account quotas (80 invitations a day, paced over the working hours)
# would spread 200 leads over days; here every call goes as fast as the sandbox answers. The
# Redis buckets, the RATE_LIMITED cooldowns and the credit ledger are all in the path regardless.
export ORCH_INVITE_PER_DAY=-1 ORCH_INVITE_PER_WEEK=-1 ORCH_SEND_PER_DAY=-1 ORCH_VISIT_PER_DAY=-1 \
       ORCH_WITHDRAW_PER_DAY=-1 ORCH_PACING=false ORCH_KEY_REQUESTS_PER_MINUTE=600000 ORCH_KEY_BURST=1000
# The key that encrypts webhook signing secrets in the database: a fresh one per demo run.
export ORCH_SECRET_KEY="${ORCH_SECRET_KEY:-$(openssl rand -hex 32)}"
"$orch" migrate

# 2. Three sender accounts, by label.
for i in 1 2 3; do
    id="$("$orch" accounts connect --login-token "demo-token-$i" --country FR --label "sender-$i")"
    echo "demo: connected sender-$i = $id"
done

# 3. The campaign: its audience search enrolls about 200 leads.
"$orch" campaign apply deploy/demo-campaign.yaml

# 4. Events (signed webhooks to our receiver) and one worker until every lead has finished.
hook_port="$(while :; do p=$(( 20000 + RANDOM % 40000 )); [ -z "$(ss -Htln "sport = :$p")" ] && { echo "$p"; break; }; done)"
"$orch" serve --webhook-listen "127.0.0.1:$hook_port" --webhook-public-url "http://127.0.0.1:$hook_port/webhooks" \
    >"$work/serve.log" 2>&1 &
pids+=($!)
"$orch" worker --exit-when-idle 2>"$work/worker.log" &
worker_pid=$!
pids+=($worker_pid)
while kill -0 "$worker_pid" 2>/dev/null; do
    sleep 2
    "$orch" report funnel demo-canonical --format json |
        jq -r '"demo: \(.found - .live - .skipped) of \(.found) leads finished (invited \(.invited), accepted \(.accepted), messaged \(.messaged), replied \(.replied))"'
done
wait "$worker_pid" || { tail -20 "$work/worker.log"; echo "demo: the worker failed" >&2; exit 1; }
# Replies to the last messages arrive within the sandbox's reply delay (at most 5 s here).
sleep 6

# 5. The result, and the sandbox's own record as the check.
echo
"$orch" report funnel demo-canonical
left="$(curl -sS "$OUTREACH_API_URL/v2/credits" -H "x-api-key: $key" | jq -r .data.credits)"
# What the API charged, explained: the ledger's posted total (every call and the audience search,
# each in the campaign's budget) plus the webhook monitoring of the accounts (about 10 credits per
# account and day, billed to the key by the V2 webhooks of `serve`, no campaign's).
posted="$(psql "$DATABASE_URL" -tAc "SELECT COALESCE(sum(posted), 0) FROM ledger_transfers WHERE state = 'posted'")"
monitoring="$(curl -sS "$control/control/credits" | jq --arg k "$key" '[.keys[] | select(.key == $k) | .charged_by_action.monitoring // 0] | add // 0')"
echo "Credits charged by the API: $((credits - left)) (left: $left) = $posted posted in the campaign's ledger" \
     "(its calls and the audience search) + $monitoring for webhook monitoring (per account and day, not a campaign's)"
echo
"$orch" budget show demo-canonical
effects="$(curl -sS "$control/control/side-effects")"
dup_invites="$(jq '[.invitations[] | select(.sent > 1)] | length' <<<"$effects")"
dup_messages="$(jq '[.messages | group_by(.account_id + .profile_url + .text)[] | select(length > 1)] | length' <<<"$effects")"
echo "Sandbox side-effect record: $(jq '[.invitations[] | select(.sent > 0)] | length' <<<"$effects") invitations," \
     "$(jq '.messages | length' <<<"$effects") messages; duplicate invitations: $dup_invites, duplicate messages: $dup_messages"
echo "Demo took $(( $(date +%s) - started )) s after the build."
[ "$dup_invites" = 0 ] && [ "$dup_messages" = 0 ] || { echo "demo: duplicates found" >&2; exit 1; }
[ "$((credits - left))" = "$((posted + monitoring))" ] || { echo "demo: the ledger does not explain the API's charges" >&2; exit 1; }
