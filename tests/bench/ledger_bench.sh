#!/usr/bin/env bash
# Benchmark of the credit ledger (not a CTest test). In one run, on the same Postgres:
#   1. the ceiling: pgbench running the equivalent bare transactions on one budget row with a
#      CHECK constraint and a transfers table: a reserve transaction (debit the budget row,
#      insert the transfers) then a settle transaction (mark them posted, move the balances),
#      1 pair and 100 pairs per transaction;
#   2. engine/ledger (tests/bench/ledger_bench.cpp) doing the same through its API, the way the
#      worker will: reserve a batch in one transaction, post or void it in another, with 1 and
#      100 attempts per batch.
# Every client draws on ONE campaign budget: the hot row every reservation locks, the worst case.
# 4 clients (pgbench -c 4 -j 2), synchronous_commit on.
#
# Usage: tests/bench/ledger_bench.sh [BUILD_DIR]        env: SECONDS_EACH=10 CLIENTS=4
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
seconds="${SECONDS_EACH:-10}"
clients="${CLIENTS:-4}"
work="$(mktemp -d /tmp/orch-ledger-bench-XXXXXX)"
cleanup() {
    "$repo/deploy/dev-services.sh" stop --dir "$work/services" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

for bin in "$build/bin/orchestrator" "$build/bin/ledger_bench"; do
    [ -x "$bin" ] || { echo "missing $bin: cmake --build $build --target orchestrator ledger_bench" >&2; exit 2; }
done
services_env="$("$repo/deploy/dev-services.sh" start --dir "$work/services")"  # a failed start stops the script
eval "$services_env"
admin_url="$DATABASE_URL"
pgbench_bin="$(ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -1)"

# 1. pgbench ceiling.
psql -q "$admin_url" <<'SQL'
DROP TABLE IF EXISTS bench_budget, bench_transfers;
CREATE TABLE bench_budget (id int PRIMARY KEY, available bigint NOT NULL CHECK (available >= 0),
                           reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0),
                           spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0));
CREATE TABLE bench_transfers (id bigserial PRIMARY KEY, state int NOT NULL DEFAULT 0, reserved bigint NOT NULL,
                              posted bigint);
INSERT INTO bench_budget (id, available) VALUES (1, 1000000000000);
SQL
cat > "$work/one.sql" <<'SQL'
BEGIN;
UPDATE bench_budget SET available = available - 2, reserved = reserved + 2 WHERE id = 1;
INSERT INTO bench_transfers (reserved) VALUES (2) RETURNING id AS tid \gset
COMMIT;
BEGIN;
UPDATE bench_transfers SET state = 1, posted = 1 WHERE id = :tid AND state = 0;
UPDATE bench_budget SET reserved = reserved - 2, spent = spent + 1, available = available + 1 WHERE id = 1;
COMMIT;
SQL
cat > "$work/batch.sql" <<'SQL'
BEGIN;
UPDATE bench_budget SET available = available - 200, reserved = reserved + 200 WHERE id = 1;
WITH t AS (INSERT INTO bench_transfers (reserved) SELECT 2 FROM generate_series(1, 100) RETURNING id)
SELECT min(id) AS lo, max(id) AS hi FROM t \gset
COMMIT;
BEGIN;
UPDATE bench_transfers SET state = 1, posted = 1 WHERE id BETWEEN :lo AND :hi AND state = 0;
UPDATE bench_budget SET reserved = reserved - 200, spent = spent + 100, available = available + 100 WHERE id = 1;
COMMIT;
SQL
pgbench_pairs() {  # $1 = script; prints settled pairs per second
    psql -q "$admin_url" -c "TRUNCATE bench_transfers" -c "VACUUM ANALYZE bench_transfers"
    "$pgbench_bin" -n -c "$clients" -j 2 -T "$seconds" -f "$1" "$admin_url" >"$work/pgbench.log" 2>&1 ||
        { cat "$work/pgbench.log" >&2; exit 1; }
    psql -At "$admin_url" -c "SELECT count(*) / $seconds FROM bench_transfers WHERE state = 1"
}
pg_one="$(pgbench_pairs "$work/one.sql")"
pg_batch="$(pgbench_pairs "$work/batch.sql")"

# 2. engine/ledger through its API, on a database migrated by the orchestrator.
run_ledger() {  # $1 = batch size; prints "pairs seconds"
    local db="ledger_bench_$1"
    psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
    DATABASE_URL="${admin_url%/*}/$db" "$build/bin/orchestrator" migrate >/dev/null
    "$build/bin/ledger_bench" "${admin_url%/*}/$db" "$1" "$clients" "$seconds" |
        awk '{print $2, $4}'
}
read -r l1 s1 < <(run_ledger 1)
read -r l100 s100 < <(run_ledger 100)
r1=$(awk -v p="$l1" -v s="$s1" 'BEGIN {print int(p / s)}')
r100=$(awk -v p="$l100" -v s="$s100" 'BEGIN {print int(p / s)}')

echo "ledger benchmark: reserve+settle pairs/s, $clients clients on one campaign budget, 2 cores, synchronous_commit on"
printf '%-66s %10s\n' "pgbench bare reserve+settle, 1 pair per transaction (ceiling)" "$pg_one/s"
printf '%-66s %10s\n' "pgbench bare reserve+settle, 100 pairs per transaction (ceiling)" "$pg_batch/s"
printf '%-66s %10s\n' "engine/ledger, 1 attempt per batch ($l1 pairs in ${s1}s)" "$r1/s"
printf '%-66s %10s\n' "engine/ledger, 100 attempts per batch ($l100 pairs in ${s100}s)" "$r100/s"
echo "ledger / pgbench: $(awk -v a="$r1" -v b="$pg_one" 'BEGIN {printf "%.1f %%", 100 * a / b}') unbatched," \
     "$(awk -v a="$r100" -v b="$pg_batch" 'BEGIN {printf "%.1f %%", 100 * a / b}') batched"
