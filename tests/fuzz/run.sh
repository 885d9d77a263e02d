#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over its committed seed corpus. New inputs go to a
# work directory of the build (the committed corpus stays as committed); a crash, a sanitizer
# report, a leak or a slow input (-timeout) leaves its reproducer there and exits non-zero.
# Usage: run.sh FUZZER SEED_DIR WORK_DIR [SECONDS]
set -euo pipefail
bin="$1"
seeds="$2"
work="$3"
seconds="${4:-20}"
mkdir -p "$work/corpus" "$work/artifacts"
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
