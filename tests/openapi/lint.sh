#!/usr/bin/env bash
# Lints an OpenAPI description with the pinned @redocly/cli (deploy/install-deps.sh installs it).
# Usage: lint.sh FILE [--expect-invalid]. Exit 0 when the outcome is the expected one.
set -uo pipefail
file="$1"
redocly="${ORCH_REDOCLY:-/opt/orch-node-tools/node_modules/.bin/redocly}"
if [ ! -x "$redocly" ]; then
    echo "redocly is missing at $redocly: run deploy/install-deps.sh" >&2
    exit 2
fi
"$redocly" lint --format=stylish "$file"
rc=$?
if [ "${2:-}" = "--expect-invalid" ]; then
    if [ $rc -eq 0 ]; then
        echo "the linter accepted an invalid description: $file" >&2
        exit 1
    fi
    echo "rejected as expected"
    exit 0
fi
exit $rc
