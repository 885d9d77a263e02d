#!/usr/bin/env bash
# Benchmark of the reports (not a CTest test): `orchestrator report funnel` on a campaign of
# ENROLLMENTS enrollments (default 1,000,000) with a realistic spread of outcomes: every lead
# checked, 80 % invited, 40 % accepted (an inbox event each), 35 % messaged, 10 % replied, 1 %
# failed, 5 % still live. Prints the median of RUNS timed runs of the funnel query (in psql, so
# process start-up is not counted) and of the whole CLI command, next to a full scan of the
# enrollments table (the physical floor of any query that looks at every enrollment) and the
# same numbers recomputed by such a scan (funnel_recount, migration 0008); the kept counts must
# equal the recount, or the bench fails.
#
# Usage: tests/bench/report_bench.sh [BUILD_DIR]     env: ENROLLMENTS=1000000 RUNS=5
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
n="${ENROLLMENTS:-1000000}"
runs="${RUNS:-5}"
work="$(mktemp -d /tmp/orch-report-bench-XXXXXX)"
cleanup() {
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
[ -n "${EXPLAIN:-}" ] && trap - EXIT
services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"  # a failed start stops the script
eval "$services_env"
orch="$build/bin/orchestrator"
"$orch" migrate >/dev/null

echo "report benchmark: filling $n enrollments..." >&2
psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" <<SQL
INSERT INTO accounts (account_id, label) VALUES ('acc_a', 'a'), ('acc_b', 'b');
INSERT INTO campaigns (campaign_id, name) VALUES (1, 'big');
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest)
VALUES (1, 1, '{}'::jsonb, '', 'x');
INSERT INTO leads (canonical_url, profile_url)
SELECT 'network.example/in/p' || g, 'https://network.example/in/p' || g FROM generate_series(1, $n) g;
-- status by lead id: 5 % live, 1 % failed, 10 % replied, the rest done
-- (the milestones of migration 0005 as the worker and the inbox would have written them)
INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, next_run_at, due_at,
                         finished_at, checked_at, invited_at, messaged_at, accepted_at, replied_at, credits)
SELECT 1, 1, l.lead_id, CASE WHEN l.lead_id % 2 = 0 THEN 'acc_a' ELSE 'acc_b' END, 'x',
       s.st::enrollment_status, now(), CASE WHEN s.st IN ('ready', 'waiting') THEN now() + interval '1 day' ELSE now() END,
       CASE WHEN s.st IN ('ready', 'waiting') THEN NULL ELSE now() END,
       now(),
       CASE WHEN l.lead_id % 10 < 8 THEN now() END,
       CASE WHEN l.lead_id % 20 < 7 THEN now() END,
       CASE WHEN l.lead_id % 10 < 4 THEN now() END,
       CASE WHEN l.lead_id % 10 = 9 THEN now() END,
       1 + (l.lead_id % 10 < 8)::int + (l.lead_id % 20 < 7)::int
FROM leads l,
     LATERAL (SELECT CASE WHEN l.lead_id % 100 < 5 THEN 'waiting' WHEN l.lead_id % 100 = 5 THEN 'failed'
                          WHEN l.lead_id % 100 < 16 THEN 'replied' ELSE 'done' END AS st) s;
-- the intent log: a check for everyone, an invite for 80 %, a message for 35 %
INSERT INTO step_attempts (enrollment_id, step, call, attempt, outcome, credits, worker, finished_at)
SELECT e.enrollment_id, 'check', 'check_invitation', 0, 'ok', 1, 'bench', now() FROM enrollments e;
INSERT INTO step_attempts (enrollment_id, step, call, attempt, outcome, credits, worker, finished_at)
SELECT e.enrollment_id, 'invite', 'invite', 0, 'ok', 1, 'bench', now() FROM enrollments e WHERE e.lead_id % 10 < 8;
INSERT INTO step_attempts (enrollment_id, step, call, attempt, outcome, credits, worker, finished_at)
SELECT e.enrollment_id, 'hello', 'send', 0, 'ok', 1, 'bench', now() FROM enrollments e WHERE e.lead_id % 20 < 7;
-- the inbox: acceptances for 40 %, replies for 10 %
INSERT INTO events (source_id, account_id, kind, lead_id, payload)
SELECT 'acc-' || e.lead_id, e.account_id, 'accepted_invitation', e.lead_id, '{}'::jsonb FROM enrollments e WHERE e.lead_id % 10 < 4;
INSERT INTO events (source_id, account_id, kind, lead_id, payload)
SELECT 'msg-' || e.lead_id, e.account_id, 'message', e.lead_id, '{}'::jsonb FROM enrollments e WHERE e.lead_id % 10 = 9;
VACUUM ANALYZE;
SQL

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
query="$(sed -n '/^WITH/,$p' "$repo/schema/queries/reports/funnel.sql" | sed "s/\$1/'big'/g")"
time_psql() {  # $1 = SQL; prints milliseconds
    psql -At "$DATABASE_URL" -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}
scan=$(for _ in $(seq 1 "$runs"); do time_psql "SELECT count(*), sum(attempt) FROM enrollments"; done | median)
sql=$(for _ in $(seq 1 "$runs"); do time_psql "$query"; done | median)
recount_sql="SELECT sum(enrolled), sum(checked), sum(invited), sum(accepted), sum(messaged), sum(replied),
                    sum(failed), sum(live), sum(credits) FROM funnel_recount WHERE campaign_id = 1"
kept_sql="${recount_sql//funnel_recount/funnel_counts}"
recount=$(for _ in $(seq 1 "$runs"); do time_psql "$recount_sql"; done | median)
if [ "$(psql -At "$DATABASE_URL" -c "$recount_sql")" != "$(psql -At "$DATABASE_URL" -c "$kept_sql")" ]; then
    echo "report benchmark: funnel_counts differ from the recount:" >&2
    psql "$DATABASE_URL" -c "$recount_sql" -c "$kept_sql" >&2
    exit 1
fi
cli=$(for _ in $(seq 1 "$runs"); do
    s=$(date +%s%N); "$orch" report funnel big --format json >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
done | median)
echo "report benchmark: $n enrollments, median of $runs runs"
printf '%-52s %10s\n' "full scan of enrollments (floor)" "$scan ms"
printf '%-52s %10s\n' "funnel recomputed by a scan (funnel_recount)" "$recount ms"
printf '%-52s %10s\n' "funnel query (psql)" "$sql ms"
printf '%-52s %10s\n' "orchestrator report funnel (whole command)" "$cli ms"
echo "(target: the funnel report under 200 ms on 1,000,000 enrollments)"
"$orch" report funnel big
