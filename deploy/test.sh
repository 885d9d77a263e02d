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
