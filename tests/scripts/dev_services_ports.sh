#!/usr/bin/env bash
# deploy/dev-services.sh start --pg-port N --redis-port N: the services listen where asked, a port
# in use is refused (not another one picked in silence), and a port that is not one is refused
# with the usage.
set -euo pipefail
script="$1/deploy/dev-services.sh"
work="$(mktemp -d /tmp/dev-services-ports.XXXXXX)"
cleanup() {
    "$script" stop --dir "$work/a" >/dev/null 2>&1 || true
    "$script" stop --dir "$work/b" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Two free ports, as the kernel hands them out.
read -r pg redis < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')

out="$("$script" start --dir "$work/a" --pg-port "$pg" --redis-port "$redis")" || fail "start with chosen ports"
grep -q "DATABASE_URL=postgresql://orch@127.0.0.1:$pg/orch" <<<"$out" || fail "postgres not on $pg: $out"
grep -q "REDIS_URL=redis://127.0.0.1:$redis/0" <<<"$out" || fail "redis not on $redis: $out"
redis-cli -h 127.0.0.1 -p "$redis" ping | grep -q PONG || fail "redis does not answer on $redis"

set +e
taken="$("$script" start --dir "$work/b" --redis-port "$redis" 2>&1)"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a port in use was accepted"
grep -q "port $redis is in use" <<<"$taken" || fail "no reason given: $taken"

set +e
bad="$("$script" start --dir "$work/b" --pg-port 80 2>&1)"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--pg-port 80: exit $rc, want 2"
grep -q -- "--pg-port needs a port number in 1024-65535, got '80'" <<<"$bad" || fail "no reason given: $bad"
echo "ok"
