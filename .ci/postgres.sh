#!/usr/bin/env bash
# A private PostgreSQL server for the test suite and the benchmark, run as root with no stdin.
#
#   eval "$(.ci/postgres.sh)"      # install if missing, start, print `export RIN_TEST_POSTGRES_URL=…`
#   .ci/postgres.sh stop           # stop the server this script started (nothing else)
#
# Installs Debian's `postgresql` package only when no server binaries are found, then runs its
# own cluster from a private data directory (RIN_PG_DIR, default /tmp/rin-ci-postgres) on port
# 5432 or the next free one, owned by the `postgres` user; creates role `rin` (password `rin`)
# and database `rin`. It never touches another cluster: it stops only the one in its directory.
set -euo pipefail
PGDIR="${RIN_PG_DIR:-/tmp/rin-ci-postgres}"
DATA="$PGDIR/data"
log() { echo "postgres.sh: $*" >&2; }

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

if [ "${1:-}" = "stop" ]; then
    BIN="$(bindir)"
    if [ -n "$BIN" ] && [ -f "$DATA/postmaster.pid" ]; then
        runuser -u postgres -- "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >&2
    else
        log "no server of ours is running in $DATA"
    fi
    exit 0
fi

if [ -z "$(bindir)" ]; then
    log "installing Debian's postgresql"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 </dev/null
    apt-get install -y -qq postgresql >&2 </dev/null
fi
BIN="$(bindir)"
id postgres >/dev/null 2>&1 || useradd --system --home-dir "$PGDIR" postgres

free_port() {
    python3 - "$@" <<'PY'
import socket
for port in range(5432, 5532):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        print(port)
        break
PY
}

mkdir -p "$PGDIR"
chown postgres "$PGDIR"
if [ ! -f "$DATA/PG_VERSION" ]; then
    runuser -u postgres -- "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 >&2
fi
if runuser -u postgres -- "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    PORT="$(cat "$PGDIR/port")"
    log "reusing our server on port $PORT"
else
    PORT="$(free_port)"
    echo "$PORT" > "$PGDIR/port"
    runuser -u postgres -- "$BIN/pg_ctl" -D "$DATA" -l "$PGDIR/server.log" -w \
        -o "-p $PORT -k $PGDIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >&2
fi
psql_() { runuser -u postgres -- "$BIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -qtA "$@"; }
if [ -z "$(psql_ -c "SELECT 1 FROM pg_roles WHERE rolname='rin'")" ]; then
    psql_ -c "CREATE ROLE rin LOGIN PASSWORD 'rin' CREATEDB"
fi
if [ -z "$(psql_ -c "SELECT 1 FROM pg_database WHERE datname='rin'")" ]; then
    psql_ -c "CREATE DATABASE rin OWNER rin"
fi
URL="postgresql://rin:rin@127.0.0.1:$PORT/rin"
log "ready: $URL"
echo "export RIN_TEST_POSTGRES_URL=$URL"
