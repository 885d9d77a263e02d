#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, starts throwaway PostgreSQL and
# Redis, runs every test (unit and integration) with CTest, and stops the services even when
# something fails. Exits non-zero on any failure.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build="${ORCH_BUILD_DIR:-$repo/build}"
jobs="${ORCH_JOBS:-2}"

./deploy/install-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"

services="$(mktemp -d "${TMPDIR:-/tmp}/orch-test-services-XXXXXX")"
fuzz_pid=""
cleanup() {
    if [ -n "$fuzz_pid" ]; then
        kill -- "-$fuzz_pid" 2>/dev/null || kill "$fuzz_pid" 2>/dev/null || true
    fi
    ./deploy/dev-services.sh stop --dir "$services" || true
    rm -rf "$services"
}
trap cleanup EXIT
# (an assignment, so a failed start stops the script: `eval "$(...)"` alone would ignore it)
services_env="$(./deploy/dev-services.sh start --dir "$services")"
eval "$services_env"
export ORCH_REQUIRE_SERVICES=1

# The libFuzzer targets (tests/fuzz: campaign loader, webhook verify-and-parse, admin request
# parsing, API response parser) in a clang + ASan build of their own, each run for
# ORCH_FUZZ_SECONDS (20 by default) over its committed seeds, two at a time (each fuzzer is one
# process on one core). ORCH_FUZZ=0 skips them. Their build runs while CTest does, at the idle
# scheduling class (chrt --idle: it gets a core only when nothing else wants it): CTest's tests
# mostly wait (for leads, timers, child processes) and use about 0.6 of the 2 cores, and the
# build would otherwise add its 4-5 minutes to the run's end.
fuzz="${ORCH_FUZZ:-1}"
fuzz_build="${ORCH_FUZZ_BUILD_DIR:-$repo/build-fuzz}"
fuzz_log="$services/fuzz-build.log"
if [ "$fuzz" != "0" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORCH_FUZZ=ON \
        -DORCH_JEMALLOC=OFF -DORCH_FUZZ_SECONDS="${ORCH_FUZZ_SECONDS:-20}" >/dev/null
    idle=(nice -n 19)
    if chrt --idle 0 true 2>/dev/null; then
        idle=(chrt --idle 0 nice -n 19)
    fi
    set -m  # the build in a process group of its own, so that cleanup stops all of it
    "${idle[@]}" cmake --build "$fuzz_build" -j"$jobs" --target fuzz_all >"$fuzz_log" 2>&1 &
    fuzz_pid=$!
    set +m
fi

ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 300

if [ "$fuzz" != "0" ]; then
    fuzz_rc=0
    wait "$fuzz_pid" || fuzz_rc=$?
    fuzz_pid=""
    cat "$fuzz_log"
    if [ "$fuzz_rc" != "0" ]; then
        echo "the fuzz targets' build failed (exit $fuzz_rc)" >&2
        exit "$fuzz_rc"
    fi
    ctest --test-dir "$fuzz_build" -L fuzz --output-on-failure -j"$jobs" --timeout 600
fi
