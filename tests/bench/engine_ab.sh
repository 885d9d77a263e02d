#!/usr/bin/env bash
# A/B comparison of two builds of the engine (not a CTest test): `engine_bench.sh` with
# PARTS=throughput, run alternately A, B, A, B... so that both see the same minutes of this VM,
# whose speed moves by ±15 % between minutes (a single pair cannot show a change of a few percent).
# Prints each run, then per build the medians of: transitions/s, and CPU µs per transition in all
# and per process (Postgres, worker, sandbox, Redis). CPU per transition moves with the VM too,
# but less than the wall clock when the difference is in one process.
#
# Usage: tests/bench/engine_ab.sh BUILD_A BUILD_B [ROUNDS]   (ROUNDS=4; a build dir holds bin/)
#   env: passed to engine_bench.sh (LEADS, WORKER_ARGS, WORKERS, THROUGHPUT_IDLE, ...);
#        BENCH_SQL_A / BENCH_SQL_B: schema experiments for one side (engine_bench.sh's BENCH_SQL)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
a="$(cd "$1" && pwd)" b="$(cd "$2" && pwd)" rounds="${3:-4}"
for d in "$a" "$b"; do
    [ -x "$d/bin/orchestrator" ] && [ -x "$d/bin/outreach-sandbox" ] ||
        { echo "$d: no bin/orchestrator and bin/outreach-sandbox" >&2; exit 2; }
done
out="$(mktemp /tmp/orch-engine-ab-XXXXXX)"
trap 'rm -f "$out" "$out".log' EXIT

# One run: prints "side transitions/s wall postgres redis sandbox workers idle transitions".
run() {  # $1 = A|B, $2 = build dir, $3 = BENCH_SQL for this side
    BENCH_SQL="$3" PARTS=throughput "$repo/tests/bench/engine_bench.sh" "$2" >"$out.log" 2>&1 ||
        { echo "engine_bench.sh failed for $1 ($2):" >&2; tail -20 "$out.log" >&2; exit 1; }
    local rate n cpu
    rate="$(sed -n 's/.*transitions in [0-9.]*s: \([0-9]*\)\/s$/\1/p' "$out.log" | head -1)"
    n="$(sed -n 's/.*: \([0-9]*\) transitions in .*/\1/p' "$out.log" | head -1)"
    cpu="$(sed -n 's/^cpu seconds in \([0-9.]*\) s: postgres \([0-9.]*\), redis \([0-9.]*\), sandbox \([0-9.]*\), workers \([0-9.]*\); cores idle \([0-9.]*\) s$/\1 \2 \3 \4 \5 \6/p' "$out.log" | head -1)"
    [ -n "$rate" ] && [ -n "$n" ] && [ -n "$cpu" ] ||
        { echo "could not read the figures of the run for $1:" >&2; tail -20 "$out.log" >&2; exit 1; }
    echo "$1 $rate $cpu $n" | tee -a "$out" | awk '{printf "%s %7d/s  wall %5.2f s  CPU µs per transition: postgres %5.1f, worker %5.1f, sandbox %5.1f, redis %4.1f; idle %.2f s\n",
        $1, $2, $3, 1e6 * $4 / $9, 1e6 * $7 / $9, 1e6 * $6 / $9, 1e6 * $5 / $9, $8}'
}

echo "A = $a"
echo "B = $b"
for _ in $(seq 1 "$rounds"); do
    run A "$a" "${BENCH_SQL_A:-}"
    run B "$b" "${BENCH_SQL_B:-}"
done
# Medians per side.
for side in A B; do
    awk -v s="$side" '$1 == s' "$out" | awk -v s="$side" '
        function median(v, k,   i, j, t) {
            for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
        }
        { k++; rate[k] = $2; all[k] = 1e6 * ($4 + $5 + $6 + $7) / $9; pg[k] = 1e6 * $4 / $9; w[k] = 1e6 * $7 / $9;
          sb[k] = 1e6 * $6 / $9; rd[k] = 1e6 * $5 / $9 }
        END { printf "median %s (%d runs): %d/s; CPU µs per transition %.1f (postgres %.1f, worker %.1f, sandbox %.1f, redis %.1f)\n",
                     s, k, median(rate, k), median(all, k), median(pg, k), median(w, k), median(sb, k), median(rd, k) }'
done
