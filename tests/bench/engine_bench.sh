#!/usr/bin/env bash
# Benchmark of the campaign engine (not a CTest test). In one run, on the same Postgres:
#   1. the ceiling: pgbench running the equivalent claim and settle transactions on a table of
#      due rows, one step per transaction and 100 steps per transaction (the batched one again
#      after the worker runs of 2., and the ratio taken against the mean of the two); and, as a
#      stricter reference, claim and settle merged into one transaction;
#   2. `orchestrator worker` moving N leads through check_invitation -> invite -> end against
#      the sandbox at zero latency, with 1 worker process and with 4, synchronous_commit on.
# A "step transition" is one committed transition of an enrollment's state machine (the worker's
# own count: the claim-time step of each due enrollment and the settle of each call; a call whose
# next step is due at once has that step decided in the cycle that settles it, and its next call
# written in one row version with the settle, both counted; the run prints how many calls went
# so, with the calls per second).
#
#   3. the worker's peak memory (GNU time), without and with IDLE_ENROLLMENTS waiting enrollments.
#
# Usage: tests/bench/engine_bench.sh [BUILD_DIR]
#   env: LEADS=50000 PGBENCH_SECONDS=10 IDLE_ENROLLMENTS=1000000 WORKER_ARGS="--batch-size 500 --worker-lanes 3"
#        (the sandbox's world holds max(LEADS, 10000) people)
#        PARTS=memory  only the memory per in-flight lead (3.; for quick iterations)
#        PARTS=throughput  only 2. with 1 worker process, and where its CPU went (for quick iterations)
#        PG_STATEMENTS=1   with PARTS=throughput: the statements that took most of Postgres's time,
#                          and the WAL records written, by kind and relation
#        THROUGHPUT_IDLE=N with PARTS=throughput: N waiting enrollments of another campaign in the table
#        WORKERS=N         with PARTS=throughput: N worker processes instead of 1
#        PG_EXPLAIN_MS=N   with PG_STATEMENTS: auto_explain logs (analyzed) plans of statements over N ms;
#        KEEP_LOG=FILE     keeps Postgres's log there
#        WORKER_LOGS=DIR   keeps the workers' logs there (worker-<processes>-<i>.log)
#        PERF_OUT=FILE     a system-wide `perf record -g` of the worker runs of 2. (the last one kept)
#        PERF_ARGS=ARGS    perf record's sampling options instead of "-g -F 499" (e.g. "--call-graph dwarf -F 199")
#        BENCH_SQL=SQL     run on each run's database after its migration (schema experiments)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
# 50,000 leads (the most one campaign file takes): 200,000 transitions, about as long as
# pgbench's 10 s, so that the worker's start and last batches weigh as little as pgbench's
# connections do (with 20,000, a 4 s run, they were some tenth of it).
leads="${LEADS:-50000}"
seconds="${PGBENCH_SECONDS:-10}"
work="$(mktemp -d /tmp/orch-engine-bench-XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -z "${KEEP_LOG:-}" ] || cp "$work/services/pg/postgres.log" "$KEEP_LOG" 2>/dev/null || true
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

[ -z "${PG_STATEMENTS:-}" ] || export ORCH_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements,auto_explain -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on -c auto_explain.log_min_duration=${PG_EXPLAIN_MS:-1000000} -c auto_explain.log_nested_statements=on -c auto_explain.log_analyze=on"
services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"  # a failed start stops the script
eval "$services_env"
admin_url="$DATABASE_URL"
pgbench_bin="$(ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -1)"
# CPU seconds (user + system) a process has used, with its reaped children (Postgres backends
# that exited) and its live ones (the other backends).
ticks=$(getconf CLK_TCK)
cpu_of() {  # $1 = pid
    local t=0 c
    for c in "$1" $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
        t=$((t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$c/stat" 2>/dev/null || echo 0)))
    done
    awk -v t="$t" -v k="$ticks" 'BEGIN {printf "%.2f", t / k}'
}
pg_pid="$(head -n 1 "$work/services/pg/data/postmaster.pid")"
redis_pid="$(head -n 1 "$work/services/redis/redis.pid")"

# 1. pgbench ceiling: the worker's two transactions around its calls. The claim takes the oldest
#    due rows that no live lease holds, with FOR UPDATE SKIP LOCKED, and leases them (committed:
#    the call runs outside any transaction); the settle then writes each claimed row's next state
#    and due time and clears its lease. One step per transaction (a claim of 1 row, its settle) and
#    100 (a claim of up to 100 rows, their settle), and again after the worker runs of 2. (the ratio
#    is taken against the mean of the two).
#    Also measured, as a stricter reference: claim and settle merged into one transaction, which no
#    worker can do (its call comes between them); it does 1.5–1.7 times the steps of the two.
psql -q "$admin_url" <<'SQL'
DROP TABLE IF EXISTS bench_steps;
CREATE TABLE bench_steps (id bigserial PRIMARY KEY, due timestamptz NOT NULL, state int NOT NULL DEFAULT 0,
                          lease_owner int, lease_expires timestamptz, payload text NOT NULL DEFAULT 'x');
INSERT INTO bench_steps (due) SELECT now() - interval '1 hour' FROM generate_series(1, 200000);
CREATE INDEX ON bench_steps (due);
VACUUM ANALYZE bench_steps;
SQL
# The claimed ids go from the claim to the settle through pgbench's \gset (one row: an array).
for n in 1 100; do
    cat > "$work/claim-settle-$n.sql" <<SQL
WITH c AS MATERIALIZED (SELECT id FROM bench_steps WHERE due <= now() AND (lease_expires IS NULL OR lease_expires < now())
                        ORDER BY due LIMIT $n FOR UPDATE SKIP LOCKED),
     u AS (UPDATE bench_steps b SET lease_owner = :client_id, lease_expires = now() + interval '5 minutes'
           FROM c WHERE b.id = c.id RETURNING b.id)
SELECT COALESCE(array_agg(id), '{}') AS ids FROM u
\gset
UPDATE bench_steps SET state = state + 1, due = now(), lease_owner = NULL, lease_expires = NULL
WHERE id = ANY(':ids'::bigint[]) AND lease_owner = :client_id;
SQL
done
cat > "$work/merged.sql" <<'SQL'
WITH c AS MATERIALIZED (SELECT id FROM bench_steps WHERE due <= now() ORDER BY due LIMIT 100 FOR UPDATE SKIP LOCKED)
UPDATE bench_steps b SET state = state + 1, due = now() FROM c WHERE b.id = c.id;
SQL
# Steps are counted in the table (sum of state), not as transactions: a batch may claim fewer
# than 100 rows.
pgbench_steps() {  # $1 = script; prints steps per second
    psql -q "$admin_url" -c "UPDATE bench_steps SET due = now() - interval '1 hour', state = 0, lease_owner = NULL, lease_expires = NULL" \
        -c "VACUUM bench_steps"
    "$pgbench_bin" -n -c 4 -j 2 -T "$seconds" -f "$1" "$admin_url" >/dev/null 2>&1
    psql -At "$admin_url" -c "SELECT sum(state) / $seconds FROM bench_steps"
}
parts="${PARTS:-all}"
if [ "$parts" = all ]; then
    pg_one="$(pgbench_steps "$work/claim-settle-1.sql")"
    pg_batch="$(pgbench_steps "$work/claim-settle-100.sql")"
    pg_merged="$(pgbench_steps "$work/merged.sql")"
fi

# 2. The orchestrator against the sandbox at zero latency.
"$build/bin/outreach-sandbox" --listen 127.0.0.1:0 --control-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
    --api-key bench:100000000 --accept-probability 0 --weekly-invitation-cap 100000000 \
    --world-people "$(( leads > 10000 ? leads : 10000 ))" \
    --key-rate-per-s 1000000 --key-burst 1000000 >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
pids+=($!)
for _ in $(seq 1 200); do [ -s "$work/ready.json" ] && break; sleep 0.05; done
export OUTREACH_API_URL="http://127.0.0.1:$(jq -r .port "$work/ready.json")" OUTREACH_API_KEY=bench
control="http://127.0.0.1:$(jq -r .control_port "$work/ready.json")"
orch="$build/bin/orchestrator"
# No quotas or pacing: the benchmark measures the engine, not a day's allowance (each call still
# takes its Redis buckets and reserves its credits in the ledger).
export ORCH_INVITE_PER_DAY=-1 ORCH_INVITE_PER_WEEK=-1 ORCH_SEND_PER_DAY=-1 ORCH_VISIT_PER_DAY=-1 \
       ORCH_WITHDRAW_PER_DAY=-1 ORCH_PACING=false ORCH_KEY_REQUESTS_PER_MINUTE=60000000 ORCH_KEY_BURST=1000000

run_workers() {  # $1 = worker processes, $2 = extra idle enrollments, $3 = worker args; prints "transitions seconds max_rss_kb"
    local n=$1 extra=${2:-0} args="${3:-${WORKER_ARGS:---batch-size 500 --worker-lanes 3}}" db="bench_$1_$2"; db="${db}_${#args}"
    psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
    export DATABASE_URL="${admin_url%/*}/$db"
    "$orch" migrate >/dev/null
    [ -z "${BENCH_SQL:-}" ] || psql -q "$DATABASE_URL" -c "$BENCH_SQL" >/dev/null
    for i in 1 2 3 4; do "$orch" accounts connect --login-token "bench-$n-$i" --label "sender-$i" >/dev/null; done
    curl -sS "$control/control/people?offset=0&limit=$leads" |
        jq -r '"profile_url,first_name", (.people[] | "\(.profile_url),\(.first_name)")' >"$work/leads.csv"
    cat >"$work/bench.yaml" <<YAML
name: bench
accounts: [sender-1, sender-2, sender-3, sender-4]
audience: {file: leads.csv}
schedule: {time_zone: UTC, days: [mon, tue, wed, thu, fri, sat, sun], hours: "00:00-24:00"}
budget_credits: 100000000
steps:
  - {id: check, kind: check_invitation, on_accepted: end, on_pending: end, on_no_invitation: invite}
  - {id: invite, kind: invite, note: "Hi {{first_name}}"}
YAML
    "$orch" campaign apply "$work/bench.yaml" >/dev/null
    if [ "$extra" -gt 0 ]; then
        # Leads of another (paused) campaign waiting a week: in the table and its indexes, never
        # due during the run, and not counted by --exit-when-idle.
        psql -q "$DATABASE_URL" <<SQL
INSERT INTO accounts (account_id) VALUES ('acc_idle');
INSERT INTO campaigns (campaign_id, name, state, pause_reason) VALUES (2, 'idle', 'paused', 'benchmark filler');
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest)
SELECT 2, 1, definition, source, digest FROM campaign_versions WHERE campaign_id = 1;
INSERT INTO leads (canonical_url, profile_url)
SELECT 'idle.example/in/' || g, 'https://idle.example/in/' || g FROM generate_series(1, $extra) g;
INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, next_run_at, due_at)
SELECT 2, 1, l.lead_id, 'acc_idle', 'check', 'waiting', now() + interval '7 days', now() + interval '7 days'
FROM leads l WHERE l.canonical_url LIKE 'idle.example/%';
SQL
        # The run starts from a settled table, as a worker meets it after days of running: vacuumed
        # (visibility map and hint bits set, so the run's reads do not rewrite every page) and
        # checkpointed (the bulk insert's WAL is not flushed during the run).
        psql -q "$DATABASE_URL" -c "VACUUM ANALYZE" -c "CHECKPOINT"
    fi
    local start end total=0 wp=() cpu0
    # A backend ends a moment after its client disconnects: its CPU must not land in the run's.
    sleep 0.5
    local lsn0=""
    [ -z "${PG_STATEMENTS:-}" ] || lsn0="$(psql -At "$DATABASE_URL" -c "SELECT pg_stat_reset_shared('wal')" -c "SELECT pg_current_wal_insert_lsn()" | tail -1)"
    cpu0="$(cpu_of "$pg_pid") $(cpu_of "$redis_pid") $(cpu_of "$sandbox_pid") $(awk '/^cpu /{print $5 + $6}' /proc/stat)"
    start=$(date +%s.%N)
    local perf_pid=""
    if [ -n "${PERF_OUT:-}" ]; then
        perf record -q -a ${PERF_ARGS:--g -F 499} -o "$PERF_OUT" >/dev/null 2>&1 &
        perf_pid=$!
    fi
    for i in $(seq 1 "$n"); do
        /usr/bin/time -f "maxrss %M %U %S" -o "$work/rss-$n-$i" \
            "$orch" worker --exit-when-idle --idle-poll-ms 20 $args \
            2>"$work/worker-$n-$i.log" &
        wp+=($!)
    done
    for p in "${wp[@]}"; do wait "$p"; done
    end=$(date +%s.%N)
    [ -z "$perf_pid" ] || { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
    # Where the CPU went: Postgres, Redis, the sandbox and the workers, in seconds (read before
    # the diagnostics below add their own).
    read -r p0 r0 s0 idle0 <<<"$cpu0"
    local p1 r1 s1 idle wcpu=0
    idle="$(awk -v i="$idle0" -v k="$ticks" '/^cpu /{print ($5 + $6 - i) / k}' /proc/stat)"
    # The workers' backends end a moment after the workers: read once they have, or a backend
    # exiting between the read of the postmaster's children and their reaping is missed (runs
    # showed a few µs of Postgres CPU per transition instead of some 45).
    for _ in $(seq 1 50); do
        [ "$(psql -At "$admin_url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db' AND backend_type = 'client backend'")" = 0 ] && break
        sleep 0.02
    done
    sleep 0.1
    p1="$(cpu_of "$pg_pid")" r1="$(cpu_of "$redis_pid")" s1="$(cpu_of "$sandbox_pid")"
    for i in $(seq 1 "$n"); do
        wcpu=$(awk -v a="$wcpu" -v f="$work/rss-$n-$i" 'BEGIN {getline l < f; split(l, x, " "); print a + x[3] + x[4]}')
    done
    awk -v p0="$p0" -v p1="$p1" -v r0="$r0" -v r1="$r1" -v s0="$s0" -v s1="$s1" -v w="$wcpu" -v idle="$idle" \
        -v wall="$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')" \
        'BEGIN {printf "cpu seconds in %.2f s: postgres %.2f, redis %.2f, sandbox %.2f, workers %.2f; cores idle %.2f s\n", wall, p1 - p0, r1 - r0, s1 - s0, w, idle}' \
        >"$work/cpu-$n-$extra"
    local calls=0 chained=0 c k
    for i in $(seq 1 "$n"); do
        t=$(sed -n 's/.*stopped after \([0-9]*\) transitions.*/\1/p' "$work/worker-$n-$i.log")
        c=$(sed -n 's/.*transitions, \([0-9]*\) calls.*/\1/p' "$work/worker-$n-$i.log")
        k=$(sed -n 's/.* calls (\([0-9]*\) went on.*/\1/p' "$work/worker-$n-$i.log")
        total=$((total + ${t:-0})) calls=$((calls + ${c:-0})) chained=$((chained + ${k:-0}))
    done
    # Two transitions per call (its claim-time step and its settle); a call whose next step was
    # due at once had that step decided in the cycle that settled it, and a next call written in the
    # same row version as the settle (both transitions counted).
    echo "$calls API calls ($(awk -v c="$calls" -v a="$start" -v b="$end" 'BEGIN {printf "%d", c / (b - a)}')/s), $chained of them went on to the lead's next step in the cycle that settled them" \
        >"$work/calls-$n-$extra"
    if [ -n "${PG_STATEMENTS:-}" ]; then
        local lsn1 waldump
        lsn1="$(psql -At "$DATABASE_URL" -c "SELECT pg_current_wal_insert_lsn()")"
        waldump="$(dirname "$pgbench_bin")/pg_waldump"
        psql "$DATABASE_URL" -c "SELECT wal_records, wal_fpi, wal_bytes, round(wal_bytes / GREATEST($total, 1)::numeric) AS bytes_per_transition FROM pg_stat_wal" >"$work/wal-$n-$extra"
        # The run's WAL records by kind, then the commonest kinds by relation: the write work.
        "$waldump" --stats=record -p "$work/services/pg/data/pg_wal" -s "$lsn0" -e "$lsn1" 2>/dev/null |
            sort -t '(' -k2 -rn | awk 'NR <= 16' >>"$work/wal-$n-$extra" || true
        "$waldump" -p "$work/services/pg/data/pg_wal" -s "$lsn0" -e "$lsn1" 2>/dev/null |
            sed -n 's/.*desc: \([A-Z_]*\).*blkref #0: rel [0-9]*\/[0-9]*\/\([0-9]*\).*/\1 \2/p' |
            sort | uniq -c | sort -rn | awk 'NR <= 20 {printf "(%s, %s, %s),", $1, "\x27" $2 "\x27", $3}' |
            sed 's/,$//' >"$work/kinds"
        [ ! -s "$work/kinds" ] || psql "$DATABASE_URL" -c "SELECT r.records, r.kind, c.relname FROM (VALUES $(cat "$work/kinds")) AS r(records, kind, node)
                                                        LEFT JOIN pg_class c ON c.relfilenode = r.node ORDER BY r.records DESC" >>"$work/wal-$n-$extra"
        psql "$DATABASE_URL" -c "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
                                 WHERE n_tup_ins + n_tup_upd > 0 ORDER BY relname" >"$work/tables-$n-$extra"
    fi
    [ -z "${WORKER_LOGS:-}" ] || { mkdir -p "$WORKER_LOGS" && cp "$work"/worker-"$n"-*.log "$WORKER_LOGS"/; }
    echo "$total $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') $(awk '{print $2}' "$work/rss-$n-1")"
}

if [ "$parts" = throughput ]; then
    read -r t1 s1 m1 < <(run_workers "${WORKERS:-1}" "${THROUGHPUT_IDLE:-0}")
    echo "orchestrator, ${WORKERS:-1} worker process(es): $t1 transitions in ${s1}s: $(awk -v t="$t1" -v s="$s1" 'BEGIN {print int(t / s)}')/s"
    cat "$work/calls-${WORKERS:-1}-${THROUGHPUT_IDLE:-0}" "$work/cpu-${WORKERS:-1}-${THROUGHPUT_IDLE:-0}"
    if [ -n "${PG_STATEMENTS:-}" ]; then
        cat "$work/wal-${WORKERS:-1}-${THROUGHPUT_IDLE:-0}" "$work/tables-${WORKERS:-1}-${THROUGHPUT_IDLE:-0}"
        psql -q "$admin_url" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
            -c "SELECT calls, round(total_exec_time::numeric, 1) AS ms, round(total_plan_time::numeric, 1) AS plan_ms, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
                FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 30"
    fi
    exit 0
fi
if [ "$parts" = all ]; then
    read -r t1 s1 m1 < <(run_workers 1 0)
    cpu1="$(cat "$work/cpu-1-0")" calls1="$(cat "$work/calls-1-0")"
    read -r t4 s4 m4 < <(run_workers 4 0)
    cpu4="$(cat "$work/cpu-4-0")" calls4="$(cat "$work/calls-4-0")"
    # The ceiling again after the worker runs: this VM's speed moves by 15 % and more from one
    # minute to the next, so the ratio is taken against the mean of the two (one run of 2026-11-23
    # gave 27.7 % against the ceiling measured before it, two others 22.2 and 23.7 %).
    pg_batch_after="$(pgbench_steps "$work/claim-settle-100.sql")"
    pg_merged_after="$(pgbench_steps "$work/merged.sql")"
    read -r tm sm mm < <(run_workers 1 "${IDLE_ENROLLMENTS:-1000000}")
fi
# Memory per in-flight lead: the same run with 4 lanes of 1,000 (4,000 leads in flight at once,
# the sandbox answering after 300 ms so they really are in flight together) against 2 lanes of
# 100; the difference in peak RSS over the difference in leads in flight.
curl -sS -X POST "$control/control/settings" -H 'content-type: application/json' \
    -d '{"latency_ms_min": 300, "latency_ms_max": 300}' >/dev/null
read -r _ _ msmall < <(run_workers 1 0 "--batch-size 100 --worker-lanes 2")
read -r _ _ mbig < <(run_workers 1 0 "${BIG_ARGS:---batch-size 1000 --worker-lanes 4 --api-pool-size 256}")
per_lead=$(awk -v a="$msmall" -v b="$mbig" 'BEGIN {printf "%.1f", (b - a) / 3800}')
if [ "$parts" = memory ]; then
    printf '%-58s %12s\n' "worker max RSS, 200 / 4,000 leads in flight (300 ms calls)" "$((msmall / 1024)) / $((mbig / 1024)) MB"
    printf '%-58s %12s\n' "memory per in-flight lead (difference / 3,800)" "$per_lead KB"
    exit 0
fi
r1=$(awk -v t="$t1" -v s="$s1" 'BEGIN {print int(t / s)}')
r4=$(awk -v t="$t4" -v s="$s4" 'BEGIN {print int(t / s)}')

echo "engine benchmark: $leads leads, check_invitation -> invite, sandbox at zero latency, 2 cores, synchronous_commit on"
printf '%-58s %12s\n' "pgbench claim, then settle, 1 step per transaction" "$pg_one/s"
printf '%-58s %12s\n' "pgbench claim, then settle, 100 steps per transaction" "$pg_batch/s"
printf '%-58s %12s\n' "  the same after the worker runs below" "$pg_batch_after/s"
printf '%-58s %12s\n' "pgbench claim+settle in one transaction, 100 steps" "$pg_merged/s"
printf '%-58s %12s\n' "  the same after the worker runs below" "$pg_merged_after/s"
pg_batch_mean=$(( (pg_batch + pg_batch_after) / 2 ))
pg_merged_mean=$(( (pg_merged + pg_merged_after) / 2 ))
printf '%-58s %12s\n' "orchestrator, 1 worker process ($t1 transitions in ${s1}s)" "$r1/s"
printf '%-58s %12s\n' "orchestrator, 4 worker processes ($t4 transitions in ${s4}s)" "$r4/s"
echo "  1 process:   $calls1"
echo "               $cpu1"
echo "  4 processes: $calls4"
echo "               $cpu4"
printf '%-58s %12s\n' "worker max RSS, $leads leads in the table" "$((m1 / 1024)) MB"
printf '%-58s %12s\n' "worker max RSS, + ${IDLE_ENROLLMENTS:-1000000} waiting enrollments ($(awk -v t="$tm" -v s="$sm" 'BEGIN {print int(t / s)}')/s)" "$((mm / 1024)) MB"
printf '%-58s %12s\n' "worker max RSS, 200 / 4,000 leads in flight (300 ms calls)" "$((msmall / 1024)) / $((mbig / 1024)) MB"
printf '%-58s %12s\n' "memory per in-flight lead (difference / 3,800)" "$per_lead KB"
echo "(memory targets: < 4 KB per in-flight lead, flat < 150 MB with 1,000,000 enrollments)"
best=$(( r1 > r4 ? r1 : r4 ))
echo "best / batched pgbench, claim then settle (the mean of before and after, $pg_batch_mean/s): $(awk -v a="$best" -v b="$pg_batch_mean" 'BEGIN {printf "%.1f %%", 100 * a / b}')" \
     "(targets: >= 20,000 transitions/s and >= 50 % of the batched ceiling)"
echo "4 processes / 1: $(awk -v a="$r4" -v b="$r1" 'BEGIN {printf "%.2f", a / b}') (target: >= 1)"
echo "best / batched pgbench, claim and settle in one transaction (the mean, $pg_merged_mean/s): $(awk -v a="$best" -v b="$pg_merged_mean" 'BEGIN {printf "%.1f %%", 100 * a / b}')"
