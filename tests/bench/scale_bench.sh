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
#       /proc, divided by the transitions), over the whole run and over its steady state: from
#       the moment 10 % of the calls had started to the moment 90 % had (sampled every 100 ms;
#       its transitions are its calls times the run's transitions per call). The whole run also
#       holds each lane's connection start (its backend, catalog caches, first plans: some 30 ms
#       of Postgres CPU per lane) and the run's tail, where lanes poll and wait for the last
#       batches; a deployment's workers run for days, so the steady state is the figure the
#       target is checked on (the whole-run one is printed beside it). Target: within 10 % of
#       the 3-lane figure.
# Each configuration runs on a fresh database and a fresh sandbox; with REPEAT=n (default 3) it
# runs n times, the configurations taking turns, and the median run is reported (by throughput for
# (a), by steady-state CPU per transition for (b)), as this shared VM's speed moves from one minute
# to the next.
# Prints MET / NOT MET per target; exits non-zero only when a run broke (no transitions, a
# worker failed, or not every lead finished).
#
# Usage: tests/bench/scale_bench.sh [BUILD_DIR]
#   env: LEADS=16000 BATCH=100 LANES=3 REPEAT=3 (batch 100: 16,000 leads make some 40 cycles per
#        lane at 12 lanes, where batches of 500 would leave a few)
#        PARTS=processes or PARTS=lanes  only (a) or only (b) (for quick iterations)
#        PG_STATEMENTS=1  also print the statements that took most of Postgres's time in each run
#        BENCH_SQL=SQL    run on each run's database after its migration (schema experiments)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
leads="${LEADS:-16000}"
batch="${BATCH:-100}"
lanes="${LANES:-3}"
repeat="${REPEAT:-3}"
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
    local c files=("/proc/$pg_pid/stat")
    for c in $(cat "/proc/$pg_pid/task/$pg_pid/children" 2>/dev/null); do files+=("/proc/$c/stat"); done
    cat "${files[@]}" 2>/dev/null | awk '{t += $14 + $15 + $16 + $17} END {print t + 0}'
}

# A fresh sandbox for each run: one run's invitations would make the next run's checks find them
# pending (and end those leads after one call instead of two).
sandbox_pid=""
start_sandbox() {
    if [ -n "$sandbox_pid" ]; then kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true; fi
    rm -f "$work/ready.json"
    "$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
        --api-key bench:100000000 --accept-probability 0 --weekly-invitation-cap 100000000 \
        --world-people "$(( leads > 10000 ? leads : 10000 ))" \
        --key-rate-per-s 1000000 --key-burst 1000000 >"$work/sandbox.log" 2>&1 &
    sandbox_pid=$!
    pids+=($!)
    for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
    [ -s "$work/ready.json" ] || broken "the sandbox did not start"
    export OUTREACH_API_URL="http://127.0.0.1:$(jq -r .port "$work/ready.json")" OUTREACH_API_KEY=bench
    control="http://127.0.0.1:$(jq -r .control_port "$work/ready.json")"
}
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
    start_sandbox
    "$orch" migrate >/dev/null
    [ -z "${BENCH_SQL:-}" ] || psql -q "$DATABASE_URL" -c "$BENCH_SQL" >/dev/null
    for i in 1 2 3 4; do "$orch" accounts connect --login-token "scale-$run_no-$i" --label "sender-$i" >/dev/null; done
    curl -sS "$control/control/people?offset=0&limit=$leads" |
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
    # Steady-state samples, every 100 ms on one connection: Postgres's CPU ticks and the calls
    # started so far (the attempt id sequence).
    touch "$work/running"
    ( while [ -e "$work/running" ]; do
          echo "SELECT $(pg_ticks), last_value FROM step_attempts_attempt_id_seq;"
          sleep 0.1
      done ) | psql -qAt -F ' ' "$DATABASE_URL" >"$work/samples-$run_no" 2>/dev/null &
    local sampler=$!
    local failed=0
    for p in "${wp[@]}"; do wait "$p" || failed=1; done
    rm -f "$work/running"
    wait "$sampler" || true
    end=$(date +%s.%N)
    # The workers' backends exit a moment after their clients: wait for them to be reaped, so that
    # their CPU is in the postmaster's cutime (a live backend's is read directly either way).
    sleep 0.3
    local t1 total=0 calls=0 t c left
    t1="$(pg_ticks)"
    [ "$failed" = 0 ] || broken "a worker exited with failure (see $work/worker-$run_no-*.log)"
    for i in $(seq 1 "$n"); do
        t=$(sed -n 's/.*stopped after \([0-9]*\) transitions.*/\1/p' "$work/worker-$run_no-$i.log")
        c=$(sed -n 's/.*transitions, \([0-9]*\) calls.*/\1/p' "$work/worker-$run_no-$i.log")
        total=$((total + ${t:-0})) calls=$((calls + ${c:-0}))
    done
    [ "$total" -gt 0 ] || broken "no transitions ($n processes x $l lanes)"
    left="$(psql -At "$DATABASE_URL" -c "SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting')")"
    [ "$left" = 0 ] || broken "$left enrollments still live after the run ($n processes x $l lanes)"
    if [ -n "${PG_STATEMENTS:-}" ]; then
        psql "$DATABASE_URL" -c "SELECT calls, round(total_exec_time::numeric, 1) AS ms, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS query
                                 FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                                 ORDER BY total_exec_time DESC LIMIT 12" >&2
    fi
    # The steady state: from the sample where 10 % of the calls had started to the one where 90 %
    # had (the lanes' connections, their first plans and the tail of the run left out); its
    # transitions are its calls times the run's transitions per call.
    local steady
    steady=$(awk -v c="$calls" -v n="$total" -v k="$ticks" '
        $2 >= 0.1 * c && a == "" {a = $1; av = $2}
        $2 >= 0.9 * c && b == "" {b = $1; bv = $2}
        END {if (b == "" || bv <= av) print "nan"; else printf "%.1f", 1e6 * (b - a) / k / ((bv - av) * n / c)}' "$work/samples-$run_no")
    awk -v n="$total" -v a="$start" -v b="$end" -v p="$((t1 - t0))" -v k="$ticks" -v s="$steady" \
        'BEGIN {printf "%d %.2f %.1f %s\n", n, b - a, 1e6 * p / k / n, s}'
}

# One run of $2 processes x $3 lanes, logged; appends "rate whole_run_us steady_us" to the file $1.
one_run() {
    local one
    # Not in a command substitution: the run's sandbox must be seen (and stopped) by the next run
    # and by the cleanup, and a broken run must stop the script.
    run "$2" "$3" >"$work/one"
    one="$(cat "$work/one")"
    awk '{printf "%d %s %s\n", $1 / $2, $3, $4}' <<<"$one" >>"$1"
    echo "  $2 process(es) x $3 lanes: $(awk '{printf "%d transitions in %s s: %d/s; Postgres CPU per transition %s us over the run, %s us in the steady state", $1, $2, $1 / $2, $3, $4}' <<<"$one")" >&2
}
# The median line of file $2 by field $1 (1 = throughput, 3 = steady-state CPU per transition).
median_of() { sort -n -k"$1" "$2" | awk -v m="$(( (repeat + 1) / 2 ))" 'NR == m'; }

echo "scale benchmark: $leads leads, check_invitation -> invite, sandbox at zero latency, batch $batch, $(nproc) cores"
parts="${PARTS:-processes lanes}"
# The configurations take turns, so that the VM's speed drifting over minutes favours none.
if [[ " $parts " == *" processes "* ]]; then
for r in $(seq 1 "$repeat"); do
    one_run "$work/a1" 1 "$lanes"
    one_run "$work/a4" 4 "$lanes"
done
read -r p1 _ < <(median_of 1 "$work/a1")
read -r p4 _ < <(median_of 1 "$work/a4")
ratio=$(awk -v a="$p4" -v b="$p1" 'BEGIN {printf "%.2f", a / b}')
printf '%-52s %10s\n' "1 process x $lanes lanes" "$p1/s"
printf '%-52s %10s\n' "4 processes x $lanes lanes" "$p4/s"
echo "4 processes / 1: ${ratio}x (target >= 1.00): $(awk -v r="$ratio" 'BEGIN {print (r >= 1 ? "MET" : "NOT MET")}')"
fi
[[ " $parts " == *" lanes "* ]] || exit 0

declare -A rate whole steady
for r in $(seq 1 "$repeat"); do
    for l in 3 6 12; do one_run "$work/b$l" 1 "$l"; done
done
for l in 3 6 12; do
    read -r rate[$l] whole[$l] steady[$l] < <(median_of 3 "$work/b$l")
done
met=MET
echo "1 process: transitions/s, Postgres CPU per transition over the whole run and in the steady state (10 % to 90 % of the calls)"
for l in 3 6 12; do
    spread=$(awk -v a="${steady[$l]}" -v b="${steady[3]}" 'BEGIN {printf "%+.1f", 100 * (a - b) / b}')
    spread_whole=$(awk -v a="${whole[$l]}" -v b="${whole[3]}" 'BEGIN {printf "%+.1f", 100 * (a - b) / b}')
    awk -v s="$spread" 'BEGIN {exit !(s > 10 || s < -10 || s != s)}' && met="NOT MET"
    printf '  %2d lanes %8s/s   whole run %6s us (%6s%%)   steady state %6s us (%6s%%)\n' \
        "$l" "${rate[$l]}" "${whole[$l]}" "$spread_whole" "${steady[$l]}" "$spread"
done
echo "steady-state Postgres CPU per transition, 6 and 12 lanes within 10 % of 3 lanes: $met"
