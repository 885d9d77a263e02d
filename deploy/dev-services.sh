#!/usr/bin/env bash
# Throwaway PostgreSQL and Redis on loopback for development, tests, the demo and benchmarks.
#
#   deploy/dev-services.sh start  [--dir DIR] [--pg-port N] [--redis-port N]
#                                                start both (idempotent) and print export lines
#   deploy/dev-services.sh stop   [--dir DIR]   stop exactly the processes this DIR started
#   deploy/dev-services.sh status [--dir DIR]   exit 0 when both answer, 3 otherwise
#   deploy/dev-services.sh env    [--dir DIR]   print the export lines of running services
#
# DIR (default: $ORCH_SERVICES_DIR, else <repo>/build/dev-services) holds the data, logs, sockets
# and PID files, so two copies with different DIRs run side by side. ORCH_PG_OPTIONS adds server
# options at start (e.g. "-c shared_preload_libraries=pg_stat_statements" for a profile). Ports are free ones picked
# at start (20000 up to the kernel's ephemeral range), or those --pg-port and --redis-port name
# (1024-65535, refused when in use). PostgreSQL refuses to run as root: when invoked as root, the server runs as the
# dedicated system user "orch-pg" (created on first use).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:-}"
shift || true
dir="${ORCH_SERVICES_DIR:-$repo/build/dev-services}"
usage() { echo "usage: $0 start|stop|status|env [--dir DIR] [--pg-port N] [--redis-port N]   ($0 --help says more)" >&2; exit 2; }
pg_port_asked=""
redis_port_asked=""
# A port given on the command line: a whole number in 1024-65535.
port_arg() {
    [[ "$2" =~ ^[0-9]{4,5}$ ]] && [ "$2" -ge 1024 ] && [ "$2" -le 65535 ] ||
        { echo "dev-services: $1 needs a port number in 1024-65535, got '$2'" >&2; usage; }
}
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) cmd=--help; shift ;;
        --dir) [ $# -ge 2 ] && [ -n "$2" ] || { echo "dev-services: --dir needs a directory" >&2; usage; }
               dir="$2"; shift 2 ;;
        --dir=*) dir="${1#--dir=}"; [ -n "$dir" ] || { echo "dev-services: --dir needs a directory" >&2; usage; }
                 shift ;;
        --pg-port|--redis-port)
            [ $# -ge 2 ] || { echo "dev-services: $1 needs a port number" >&2; usage; }
            port_arg "$1" "$2"
            if [ "$1" = --pg-port ]; then pg_port_asked="$2"; else redis_port_asked="$2"; fi
            shift 2 ;;
        *) echo "dev-services: unknown argument '$1'" >&2; usage ;;
    esac
done
case "$cmd" in
    -h|--help|help)
        # The header above is the manual.
        sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    start|stop|status|env) ;;
    *) usage ;;
esac
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
pg_user="orch-pg"

log() { echo "dev-services: $*" >&2; }
die() { log "$*"; exit 1; }

pg_bin() {
    local b
    b="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$b" ] || die "PostgreSQL server binaries not found (run deploy/install-deps.sh)"
    echo "$b"
}

# Runs a command as the PostgreSQL owner: the dedicated user when we are root, else ourselves.
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$pg_user" -- "$@"
    else
        "$@"
    fi
}

# Free: no socket of any state uses it (a client connection's local port blocks a bind as much
# as a listener does).
port_free() { [ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]; }

# Below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by default), where every
# outgoing connection takes its local port: a port picked there could be taken by one between
# this check and the server's bind (seen: "could not bind ... Address already in use").
free_port() {
    local p i low
    low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 21000 ] || low=32768
    for i in $(seq 1 200); do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % (low - 20000) ))
        if port_free "$p"; then echo "$p"; return 0; fi
    done
    die "no free port found"
}

# The port asked for ($1, may be empty) when it is free, else a free one picked.
port_for() {
    if [ -z "$1" ]; then free_port; return; fi
    port_free "$1" || die "port $1 is in use"
    echo "$1"
}

# A PID file names a live process whose command line contains $2.
pid_alive() {
    local pidfile="$1" pattern="$2" pid
    [ -f "$pidfile" ] || return 1
    pid="$(head -n 1 "$pidfile" 2>/dev/null | tr -dc '0-9')"
    [ -n "$pid" ] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$pattern"
}

pg_running() { pid_alive "$pg_data/postmaster.pid" "postgres"; }
redis_running() { pid_alive "$dir/redis/redis.pid" "redis-server"; }

pg_data_root() {
    # The data folder must be reachable by the PostgreSQL user; when $dir is not (a private
    # home folder, say), the data lives in a folder of its own under /tmp, linked from $dir.
    # The path printed is the resolved one: the server user may not traverse $dir itself.
    if [ -L "$dir/pg" ] || [ -d "$dir/pg" ]; then
        readlink -f "$dir/pg"; return
    fi
    if [ "$(id -u)" -eq 0 ] && ! runuser -u "$pg_user" -- test -x "$dir" 2>/dev/null; then
        local tmp
        tmp="$(mktemp -d /tmp/orch-pg-XXXXXX)"
        chmod 755 "$tmp"
        ln -s "$tmp" "$dir/pg"
    else
        mkdir -p "$dir/pg"
    fi
    readlink -f "$dir/pg"
}

ensure_pg_user() {
    [ "$(id -u)" -eq 0 ] || return 0
    if ! id "$pg_user" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$pg_user"
    fi
}

start_pg() {
    local bin port root
    bin="$(pg_bin)"
    ensure_pg_user
    root="$(pg_data_root)"
    pg_data="$root/data"
    if pg_running; then
        return 0
    fi
    if [ "$(id -u)" -eq 0 ]; then
        chown "$pg_user" "$root"
    fi
    if [ ! -f "$pg_data/PG_VERSION" ]; then
        as_pg "$bin/initdb" -D "$pg_data" -U orch --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync \
            >"$root/initdb.log" 2>&1 || { cat "$root/initdb.log" >&2; die "initdb failed"; }
    else
        # Start is idempotent: a directory used before keeps its database, which a new user
        # trying things may not expect.
        log "reusing the PostgreSQL data in $pg_data (its campaigns and accounts included; stop and remove the directory for a fresh one)"
    fi
    port="$(port_for "$pg_port_asked")"
    mkdir -p "$root/sock"
    [ "$(id -u)" -ne 0 ] || chown "$pg_user" "$root/sock"
    as_pg "$bin/pg_ctl" -D "$pg_data" -l "$root/postgres.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$root/sock -c max_connections=200 -c shared_buffers=256MB ${ORCH_PG_OPTIONS:-}" \
        start >/dev/null || { tail -n 20 "$root/postgres.log" >&2; die "PostgreSQL did not start"; }
    echo "$port" > "$dir/pg.port"
    # The database the product uses; created once.
    if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U orch -d postgres -tAc "select 1 from pg_database where datname='orch'" | grep -q 1; then
        "$bin/createdb" -h 127.0.0.1 -p "$port" -U orch orch
    fi
}

start_redis() {
    local port
    mkdir -p "$dir/redis"
    if redis_running; then
        return 0
    fi
    port="$(port_for "$redis_port_asked")"
    redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --pidfile "$dir/redis/redis.pid" \
        --dir "$dir/redis" --logfile "$dir/redis/redis.log" --save "" --appendonly yes --appendfsync everysec \
        --protected-mode yes >/dev/null
    echo "$port" > "$dir/redis.port"
}

wait_ready() {
    local bin i
    bin="$(pg_bin)"
    local pg_ok=no redis_ok=no
    # 60 s, and which one did not answer: the 10 s this used to wait ran out once on a busy machine,
    # with no word of which service was late.
    for i in $(seq 1 600); do
        "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/pg.port")" && pg_ok=yes || pg_ok=no
        [ "$(redis-cli -h 127.0.0.1 -p "$(cat "$dir/redis.port")" ping 2>/dev/null)" = "PONG" ] && redis_ok=yes || redis_ok=no
        if [ "$pg_ok" = yes ] && [ "$redis_ok" = yes ]; then
            return 0
        fi
        sleep 0.1
    done
    die "services did not answer within 60 s (PostgreSQL answered: $pg_ok, Redis answered: $redis_ok; logs in $dir)"
}

print_env() {
    echo "export DATABASE_URL=postgresql://orch@127.0.0.1:$(cat "$dir/pg.port")/orch"
    echo "export REDIS_URL=redis://127.0.0.1:$(cat "$dir/redis.port")/0"
    echo "export ORCH_SERVICES_DIR=$dir"
}

stop_pg() {
    if pg_running; then
        as_pg "$(pg_bin)/pg_ctl" -D "$pg_data" -m fast -w -t 30 stop >/dev/null || true
    fi
    # A data folder that had to live under /tmp goes with its link.
    if [ -L "$dir/pg" ]; then
        rm -rf "$(readlink -f "$dir/pg")" "$dir/pg"
    fi
}

stop_redis() {
    local pid i
    if redis_running; then
        pid="$(head -n 1 "$dir/redis/redis.pid" | tr -dc '0-9')"
        kill "$pid"
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
    fi
    rm -f "$dir/redis/redis.pid"
}

pg_data="$(readlink -f "$dir/pg" 2>/dev/null || echo "$dir/pg")/data"
case "$cmd" in
    start)
        start_pg
        start_redis
        wait_ready
        print_env > "$dir/env"
        print_env
        ;;
    stop)
        stop_redis
        stop_pg
        log "stopped services of $dir"
        ;;
    status)
        ok=0
        if pg_running; then log "postgres: running on port $(cat "$dir/pg.port")"; else log "postgres: stopped"; ok=3; fi
        if redis_running; then log "redis: running on port $(cat "$dir/redis.port")"; else log "redis: stopped"; ok=3; fi
        exit "$ok"
        ;;
    env)
        pg_running && redis_running || die "services of $dir are not running"
        print_env
        ;;
esac
