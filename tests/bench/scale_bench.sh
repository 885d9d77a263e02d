#!/usr/bin/env bash
# Scale-out benchmark of the worker (not a CTest test). `orchestrator worker` moves LEADS leads
# through check_invitation -> invite -> end against the sandbox at zero latency (as in
# tests/bench/engine_bench.sh), on one Postgres, and this prints:
#   (a) 1 worker process against 4, each with the same lanes (LANES, default 3): a deployment
#       scales out by starting more processes of the same configuration, so 4 processes hold 4
#       times the lanes. Target: the 4 processes' transitions/s >= the single one's (on this
#       2-core machine more processes add no CPU; they must not lose throughput either).
#   (b) 3, 6 and 12 lanes in one process: transitions/s and the CPU the Postgres server spent
#       per transition (utime + stime of the postmaster and its children, live and reaped, from
#       /proc, over the measured interval, divided by the transitions). Target: each within 10 %
#       of the 3-lane figure.
# Each configuration runs on a fresh database; with REPEAT=n (default 2) it runs n times and the
# run with the median Postgres CPU per transition (for (a): the median throughput) is reported,
# as this shared VM's speed moves from one minute to the next.
# Prints MET / NOT MET per target; exits non-zero only when a run broke (no transitions, a
# worker failed, or not every lead finished).
#
# Usage: tests/bench/scale_bench.sh [BUILD_DIR]
#   env: LEADS=16000 BATCH=100 LANES=3 REPEAT=2
#        PG_STATEMENTS=1  also print the statements that took most of Postgres's time in each run
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
leads="${LEADS:-16000}"
batch="${BATCH:-100}"
lanes="${LANES:-3}"
repeat="${REPEAT:-2}"
work="$(mktemp -d /tmp/orch-scale-bench-XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
broken() { echo "scale_bench: broken run: $*" >&2; exit 1; }

[ -z "${PG_STATEMENTS:-}" ] || export ORCH_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"
eval "$services_env"
admin_url="$DATABASE_URL"
pg_pid="$(head -n 1 "$work/services/pg/data/postmaster.pid")"
ticks=$(getconf CLK_TCK)
# CPU ticks (user + system) of the postmaster and its children: the live ones' own, and those of
# children already reaped (the postmaster's cutime + cstime).
pg_ticks() {
    local t=0 c
    for c in "$pg_pid" $(cat "/proc/$pg_pid/task/$pg_pid/children" 2>/dev/null); do
        t=$((t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$c/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key bench:100000000 --accept-probability 0 --weekly-invitation-cap 100000000 \
    --world-people "$(( leads * (5 * repeat + 1) ))" \
    --key-rate-per-s 1000000 --key-burst 1000000 >"$work/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
[ -s "$work/ready.json" ] || broken "the sandbox did not start"
export OUTREACH_API_URL="http://127.0.0.1:$(jq -r .port "$work/ready.json")" OUTREACH_API_KEY=bench
control="http://127.0.0.1:$(jq -r .control_port "$work/ready.json")"
orch="$build/bin/orchestrator"
export ORCH_INVITE_PER_DAY=-1 ORCH_INVITE_PER_WEEK=-1 ORCH_SEND_PER_DAY=-1 ORCH_VISIT_PER_DAY=-1 \
       ORCH_WITHDRAW_PER_DAY=-1 ORCH_PACING=false ORCH_KEY_REQUESTS_PER_MINUTE=60000000 ORCH_KEY_BURST=1000000
cat >"$work/bench.yaml" <<'YAML'
name: bench
accounts: [sender-1, sender-2, sender-3, sender-4]
audience: {file: leads.csv}
schedule: {time_zone: UTC, days: [mon, tue, wed, thu, fri, sat, sun], hours: "00:00-24:00"}
budget_credits: 100000000
steps:
  - {id: check, kind: check_invitation, on_accepted: end, on_pending: end, on_no_invitation: invite}
  - {id: invite, kind: invite, note: "Hi {{first_name}}"}
YAML

run_no=0
run() {  # $1 = processes, $2 = lanes per process; prints "transitions seconds pg_us_per_transition"
    local n=$1 l=$2 db
    run_no=$((run_no + 1))
    db="scale_$run_no"
    psql -q "$admin_url" -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
    export DATABASE_URL="${admin_url%/*}/$db"
    "$orch" migrate >/dev/null
    for i in 1 2 3 4; do "$orch" accounts connect --login-token "scale-$run_no-$i" --label "sender-$i" >/dev/null; done
    # People no run has contacted: a check of someone invited by an earlier run finds the invitation
    # pending and ends the lead (half the transitions).
    curl -sS "$control/control/people?offset=$(( (run_no - 1) * leads ))&limit=$leads" |
        jq -r '"profile_url,first_name", (.people[] | "\(.profile_url),\(.first_name)")' >"$work/leads.csv"
    [ "$(wc -l <"$work/leads.csv")" -gt "$leads" ] || broken "the sandbox gave fewer than $leads people"
    "$orch" campaign apply "$work/bench.yaml" >/dev/null
    # Settled table (the bulk insert's hint bits and WAL out of the way) and the setup's backends
    # gone before the interval starts.
    psql -q "$DATABASE_URL" -c "VACUUM ANALYZE" -c "CHECKPOINT"
    [ -z "${PG_STATEMENTS:-}" ] || psql -q "$DATABASE_URL" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null
    sleep 0.5
    local t0 start end wp=() i
    t0="$(pg_ticks)"
    start=$(date +%s.%N)
    for i in $(seq 1 "$n"); do
        "$orch" worker --exit-when-idle --idle-poll-ms 20 --batch-size "$batch" --worker-lanes "$l" \
            --worker-id "scale-$run_no-$i" 2>"$work/worker-$run_no-$i.log" &
        wp+=($!)
    done
    local failed=0
    for p in "${wp[@]}"; do wait "$p" || failed=1; done
    end=$(date +%s.%N)
    # The workers' backends exit a moment after their clients: wait for them to be reaped, so that
    # their CPU is in the postmaster's cutime (a live backend's is read directly either way).
    sleep 0.3
    local t1 total=0 t left
    t1="$(pg_ticks)"
    [ "$failed" = 0 ] || broken "a worker exited with failure (see $work/worker-$run_no-*.log)"
    for i in $(seq 1 "$n"); do
        t=$(sed -n 's/.*stopped after \([0-9]*\) transitions.*/\1/p' "$work/worker-$run_no-$i.log")
        total=$((total + ${t:-0}))
    done
    [ "$total" -gt 0 ] || broken "no transitions ($n processes x $l lanes)"
    left="$(psql -At "$DATABASE_URL" -c "SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting')")"
    [ "$left" = 0 ] || broken "$left enrollments still live after the run ($n processes x $l lanes)"
    if [ -n "${PG_STATEMENTS:-}" ]; then
        psql "$DATABASE_URL" -c "SELECT calls, round(total_exec_time::numeric, 1) AS ms, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS query
                                 FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                                 ORDER BY total_exec_time DESC LIMIT 12" >&2
    fi
    awk -v n="$total" -v a="$start" -v b="$end" -v p="$((t1 - t0))" -v k="$ticks" \
        'BEGIN {printf "%d %.2f %.1f\n", n, b - a, 1e6 * p / k / n}'
}

# The run of `repeat` whose field $1 (2 = throughput, 3 = CPU per transition) is the median.
median_run() {  # $1 = field to rank by, $2 = processes, $3 = lanes; prints "rate us_per_transition"
    local f=$1 r out=()
    for r in $(seq 1 "$repeat"); do
        local one
        one="$(run "$2" "$3")"
        out+=("$(awk '{printf "%d %s\n", $1 / $2, $3}' <<<"$one")")
        echo "  run $r, $2 process(es) x $3 lanes: $(awk '{print $1 " transitions in " $2 " s"}' <<<"$one"): ${out[-1]% *}/s, ${out[-1]#* } us Postgres CPU per transition" >&2
    done
    printf '%s\n' "${out[@]}" | sort -n -k"$f" | awk -v m="$(( (repeat + 1) / 2 ))" 'NR == m'
}

echo "scale benchmark: $leads leads, check_invitation -> invite, sandbox at zero latency, batch $batch, $(nproc) cores"
read -r p1 _ < <(median_run 1 1 "$lanes")
read -r p4 _ < <(median_run 1 4 "$lanes")
ratio=$(awk -v a="$p4" -v b="$p1" 'BEGIN {printf "%.2f", a / b}')
printf '%-52s %10s\n' "1 process x $lanes lanes" "$p1/s"
printf '%-52s %10s\n' "4 processes x $lanes lanes" "$p4/s"
echo "4 processes / 1: ${ratio}x (target >= 1.00): $(awk -v r="$ratio" 'BEGIN {print (r >= 1 ? "MET" : "NOT MET")}')"

declare -A rate cpu
for l in 3 6 12; do
    read -r rate[$l] cpu[$l] < <(median_run 2 1 "$l")
done
met=MET
printf '%-22s %14s %32s %10s\n' "1 process" "transitions/s" "Postgres CPU per transition" "vs 3 lanes"
for l in 3 6 12; do
    spread=$(awk -v a="${cpu[$l]}" -v b="${cpu[3]}" 'BEGIN {printf "%+.1f", 100 * (a - b) / b}')
    awk -v s="$spread" 'BEGIN {exit !(s > 10 || s < -10)}' && met="NOT MET"
    printf '%-22s %14s %29s us %9s%%\n' "$l lanes" "${rate[$l]}" "${cpu[$l]}" "$spread"
done
echo "Postgres CPU per transition, 6 and 12 lanes within 10 % of 3 lanes: $met"
