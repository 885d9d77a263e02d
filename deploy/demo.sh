#!/usr/bin/env bash
# The README's demo command. Installs dependencies, builds, starts outreach-sandbox with short
# simulated delays, and walks the campaign path over HTTP the way the orchestrator will:
#   login 3 accounts -> hosted webhook per account -> search_people -> check_invitation ->
#   invite (with a note) -> wait for accepted_invitation events -> send message ->
#   wait for replies -> funnel, credits spent, and the sandbox's side-effect record.
# Stops everything it started, also on failure or Ctrl-C.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build="${ORCH_BUILD_DIR:-$repo/build}"
leads="${DEMO_LEADS:-24}"
key="demo-key"

./deploy/install-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${ORCH_JOBS:-2}" --target outreach-sandbox orchestrator

work="$(mktemp -d "${TMPDIR:-/tmp}/orch-demo-XXXXXX")"
sandbox_pid=""
cleanup() {
    if [ -n "$sandbox_pid" ] && kill -0 "$sandbox_pid" 2>/dev/null; then
        kill "$sandbox_pid" && wait "$sandbox_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key "$key:5000" --seed 7 \
    --accept-probability 0.7 --accept-delay-ms-min 300 --accept-delay-ms-max 3000 \
    --reply-probability 0.5 --reply-delay-ms-min 300 --reply-delay-ms-max 2000 \
    >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 100); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
[ -s "$work/ready.json" ] || { cat "$work/sandbox.log"; echo "demo: the sandbox did not start" >&2; exit 1; }
api="http://127.0.0.1:$(jq -r .port "$work/ready.json")"
control="http://127.0.0.1:$(jq -r .control_port "$work/ready.json")"
echo "demo: outreach-sandbox on $api (control $control)"

post() { curl -sS -X POST "$api$1" -H "x-api-key: $key" -H 'content-type: application/json' -d "$2"; }
get() { curl -sS "$api$1" -H "x-api-key: $key"; }
v2() { post "/v2/$1" "$(jq -nc --arg a "$2" --arg x "$3" --argjson p "$4" '{account_id:$a, action:$x, params:$p}')"; }
ok() { jq -e '.success == true' >/dev/null <<<"$1" || { echo "demo: unexpected answer: $1" >&2; exit 1; }; }

# 1. Three sender accounts, each with a hosted webhook for acceptances and replies.
accounts=()
webhooks=()
for i in 1 2 3; do
    r="$(post /v2/login "$(jq -nc --arg t "demo-token-$i" '{platform:"network", country:"FR", login_token:$t}')")"
    ok "$r"
    accounts+=("$(jq -r .data.account_id <<<"$r")")
    w="$(post /v2/webhooks "$(jq -nc --arg a "${accounts[-1]}" '{account_id:$a, events:["accepted_invitation","message_received"]}')")"
    ok "$w"
    webhooks+=("$(jq -r .data.webhook_id <<<"$w")")
done
echo "demo: connected accounts ${accounts[*]}"

# 2. Audience: a people search.
r="$(v2 profiles "${accounts[0]}" search_people "{\"title\":\"Engineer\",\"total_results\":$leads}")"
ok "$r"
mapfile -t urls < <(jq -r '.data.results[].network_url' <<<"$r")
found=${#urls[@]}
echo "demo: search_people found $found leads (of $(jq -r .data.total_available_results <<<"$r") matching)"

# 3. Check, then invite; each lead sticks to one sender (round robin).
declare -A sender_of
checked=0; invited=0
for idx in "${!urls[@]}"; do
    url="${urls[$idx]}"
    acc="${accounts[$((idx % 3))]}"
    sender_of["$url"]="$acc"
    r="$(v2 network "$acc" check_invitation "$(jq -nc --arg u "$url" '{profile_url:$u}')")"
    ok "$r"
    checked=$((checked + 1))
    if [ "$(jq -r .data.invitation_state <<<"$r")" = "NO_INVITATION" ]; then
        r="$(v2 network "$acc" invite "$(jq -nc --arg u "$url" '{profile_url:$u, message:"Hi! I would love to connect."}')")"
        ok "$r"
        invited=$((invited + 1))
    fi
done
echo "demo: checked $checked, invited $invited"

# 4. Wait for accepted_invitation events (hosted polling), message each new connection once.
declare -A messaged
accepted=0; sent=0; replied=0
declare -A after
deadline=$((SECONDS + 15))
while [ $SECONDS -lt $deadline ]; do
    for w in "${!webhooks[@]}"; do
        wid="${webhooks[$w]}"
        q="limit=200"
        [ -n "${after[$wid]:-}" ] && q="$q&after=${after[$wid]}"
        r="$(get "/v2/webhooks/$wid/events?$q")"
        ok "$r"
        while IFS= read -r item; do
            [ -n "$item" ] || continue
            after[$wid]="$(jq -r .event_id <<<"$item")"
            type="$(jq -r .event.event.type <<<"$item")"
            if [ "$type" = "accepted_invitation" ]; then
                accepted=$((accepted + 1))
                url="$(jq -r .event.event.profile_url <<<"$item")"
                first="$(jq -r .event.event.first_name <<<"$item")"
                if [ -z "${messaged[$url]:-}" ]; then
                    r="$(v2 messages "${accounts[$w]}" send "$(jq -nc --arg u "$url" --arg f "$first" \
                        '{profile_url:$u, message_text:("Thanks for connecting, " + $f + "! Open to a quick chat?")}')")"
                    ok "$r"
                    messaged[$url]=1
                    sent=$((sent + 1))
                fi
            elif [ "$type" = "message" ]; then
                replied=$((replied + 1))
            fi
        done < <(jq -c '.data.items[]' <<<"$r")
    done
    # Done when every accepted lead was messaged and the expected replies had time to come.
    sleep 0.5
done

credits_left="$(jq -r .data.credits <<<"$(get /v2/credits)")"
effects="$(curl -sS "$control/control/side-effects")"
dup_invites="$(jq '[.invitations[] | select(.sent > 1)] | length' <<<"$effects")"
dup_messages="$(jq '[.messages | group_by(.account_id + .profile_url)[] | select(length > 1)] | length' <<<"$effects")"

echo
echo "Funnel"
printf '  %-10s %5s\n' found "$found" checked "$checked" invited "$invited" accepted "$accepted" \
    messaged "$sent" replied "$replied"
echo "Credits spent: $((5000 - credits_left)) (left: $credits_left)"
echo "Side effects recorded by the sandbox: $(jq '.invitations | length' <<<"$effects") invitations," \
     "$(jq '.messages | length' <<<"$effects") messages; duplicate invitations: $dup_invites, duplicate messages: $dup_messages"
[ "$dup_invites" = 0 ] && [ "$dup_messages" = 0 ] || { echo "demo: duplicates found" >&2; exit 1; }
