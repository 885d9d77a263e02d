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
cleanup() {
    ./deploy/dev-services.sh stop --dir "$services" || true
    rm -rf "$services"
}
trap cleanup EXIT
# (an assignment, so a failed start stops the script: `eval "$(...)"` alone would ignore it)
services_env="$(./deploy/dev-services.sh start --dir "$services")"
eval "$services_env"
export ORCH_REQUIRE_SERVICES=1

ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 300

# The libFuzzer targets (tests/fuzz: campaign loader, webhook verify-and-parse, admin request
# parsing, API response parser) in a clang + ASan build of their own, each run for
# ORCH_FUZZ_SECONDS (20 by default) over its committed seeds, two at a time (each fuzzer is one
# process on one core). ORCH_FUZZ=0 skips them.
if [ "${ORCH_FUZZ:-1}" != "0" ]; then
    fuzz_build="${ORCH_FUZZ_BUILD_DIR:-$repo/build-fuzz}"
    CC=clang CXX=clang++ cmake -S . -B "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORCH_FUZZ=ON \
        -DORCH_JEMALLOC=OFF -DORCH_FUZZ_SECONDS="${ORCH_FUZZ_SECONDS:-20}" >/dev/null
    cmake --build "$fuzz_build" -j"$jobs" --target fuzz_all
    ctest --test-dir "$fuzz_build" -L fuzz --output-on-failure -j"$jobs" --timeout 600
fi
