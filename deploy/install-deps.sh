#!/usr/bin/env bash
# Installs every build, test and runtime dependency from Debian 12 packages.
# Idempotent: packages already present are skipped; `apt-get update` runs at most once per call,
# and only when something is missing. Must run as root (or with sudo available).
set -euo pipefail

packages=(
    build-essential cmake pkg-config ccache git
    # Boost 1.81: headers (Asio, Beast) plus only the compiled components we link.
    libboost1.81-dev libboost-url1.81-dev
    nlohmann-json3-dev libpqxx-dev libhiredis-dev libspdlog-dev libfmt-dev libyaml-cpp-dev
    libcli11-dev libssl-dev
    # the allocator of orchestrator and outreach-sandbox
    libjemalloc-dev
    # JSON Schema validation of campaign files, time zones for working hours, /metrics
    libvalijson-dev libhowardhinnant-date-dev tzdata prometheus-cpp-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    postgresql postgresql-contrib redis-server redis-tools
    # tools the tests and benchmarks drive
    wrk curl jq procps iproute2 util-linux time openssl
    # the libFuzzer targets (tests/fuzz): clang with its fuzzer and sanitizer runtimes
    clang libclang-rt-14-dev
)

# The dashboard's browser test (tests/ui, label ui) drives Debian's Chromium headless; the fonts
# are for its screenshots (Chromium only recommends them).
packages+=(chromium fonts-liberation)

# The OpenAPI linter of the admin endpoint's description (tests: openapi_lint), pinned, from the
# npm registry into its own prefix (not global). Needs node >= 20 and npm on the machine.
REDOCLY_VERSION=2.11.1
NODE_TOOLS=/opt/orch-node-tools
install_node_tools() {
    if [ -x "$NODE_TOOLS/node_modules/.bin/redocly" ] &&
       [ "$("$NODE_TOOLS/node_modules/.bin/redocly" --version 2>/dev/null)" = "$REDOCLY_VERSION" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null; then
        echo "install-deps: npm is missing: the OpenAPI lint test needs node >= 20 and npm" >&2
        return 1
    fi
    echo "install-deps: installing @redocly/cli@$REDOCLY_VERSION into $NODE_TOOLS"
    ${SUDO:-} mkdir -p "$NODE_TOOLS"
    ${SUDO:-} npm install --no-audit --no-fund --loglevel=error --prefix "$NODE_TOOLS" "@redocly/cli@$REDOCLY_VERSION"
}

# The dashboard's npm packages (web/package-lock.json: uPlot, Pico CSS, and playwright-core for
# its tests), which the build embeds into the binary: installed into web/node_modules, again only
# when the lockfile changed since the last install. After that the build and the app are offline.
install_web_deps() {
    local web
    web="$(cd "$(dirname "${BASH_SOURCE[0]}")/../web" && pwd)"
    if [ -f "$web/node_modules/.package-lock.json" ] &&
       cmp -s <(jq -S .packages "$web/package-lock.json" | jq -S 'del(."")') \
              <(jq -S .packages "$web/node_modules/.package-lock.json"); then
        return 0
    fi
    if ! command -v npm >/dev/null; then
        echo "install-deps: npm is missing: the dashboard (web/) needs node >= 20 and npm" >&2
        return 1
    fi
    echo "install-deps: npm ci in $web"
    (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
}

# The validating proxy of the admin API's conformance test (tests: admin_conformance_test), pinned
# with its lockfile (deploy/node/prism), in a prefix of its own so its dependencies never meet the
# linter's.
PRISM_VERSION=5.16.0
PRISM_PREFIX=/opt/orch-prism
install_prism() {
    if [ -x "$PRISM_PREFIX/node_modules/.bin/prism" ] &&
       [ "$("$PRISM_PREFIX/node_modules/.bin/prism" --version 2>/dev/null)" = "$PRISM_VERSION" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null; then
        echo "install-deps: npm is missing: the conformance test needs node >= 20 and npm" >&2
        return 1
    fi
    echo "install-deps: installing @stoplight/prism-cli@$PRISM_VERSION into $PRISM_PREFIX (npm ci, deploy/node/prism)"
    ${SUDO:-} mkdir -p "$PRISM_PREFIX"
    ${SUDO:-} cp "$(dirname "${BASH_SOURCE[0]}")/node/prism/package.json" \
        "$(dirname "${BASH_SOURCE[0]}")/node/prism/package-lock.json" "$PRISM_PREFIX/"
    ${SUDO:-} npm ci --no-audit --no-fund --loglevel=error --prefix "$PRISM_PREFIX"
}

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    install_node_tools
    install_web_deps
    install_prism
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
# Debian's postgresql package starts a cluster service on install; our tests run their own
# throwaway servers, so the packaged one is not needed. Leave it as the admin configured it.
install_node_tools
install_web_deps
install_prism
echo "install-deps: done"
