#!/usr/bin/env bash
# Install PostgreSQL 15 with pgvector and start a throwaway cluster on loopback for the integration tests.
#
#   sudo scripts/start-postgres.sh        # prints the URL to put in EVIDENCEDESK_PG_URL
#
# Idempotent: every step is skipped when already done (packages installed, extension built, cluster
# initialised, server running, database created). Debian bookworm ships no pgvector package, so the
# extension is built from Debian trixie's source package (a deb-src entry only: no trixie binaries
# are installed). Settings through the environment:
#   EVIDENCEDESK_PG_PORT (55432), EVIDENCEDESK_PG_DATA (/var/tmp/evidencedesk-pg), EVIDENCEDESK_PG_DB
#   (evidencedesk_test).
set -euo pipefail

PORT="${EVIDENCEDESK_PG_PORT:-55432}"
DATA="${EVIDENCEDESK_PG_DATA:-/var/tmp/evidencedesk-pg}"
DB="${EVIDENCEDESK_PG_DB:-evidencedesk_test}"
PG_VERSION=15
BIN="/usr/lib/postgresql/${PG_VERSION}/bin"
PG_CONFIG="${BIN}/pg_config"
APT=(apt-get -o DPkg::Lock::Timeout=300 -y -q)
SRC_LIST=/etc/apt/sources.list.d/evidencedesk-trixie-src.sources

log() { echo "[start-postgres] $*" >&2; }

if [[ "$(id -u)" != 0 ]]; then
    echo "start-postgres.sh: run as root (it installs packages and starts the server as user postgres)" >&2
    exit 1
fi

# 1. PostgreSQL 15, its server headers and a compiler.
need=()
for pkg in "postgresql-${PG_VERSION}" "postgresql-server-dev-${PG_VERSION}" build-essential dpkg-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if ((${#need[@]})); then
    log "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${APT[@]}" update >/dev/null
    "${APT[@]}" install --no-install-recommends "${need[@]}" >/dev/null
fi

# 2. pgvector, built from Debian trixie's source package.
if [[ ! -f "$("$PG_CONFIG" --sharedir)/extension/vector.control" ]]; then
    if [[ ! -f "$SRC_LIST" ]]; then
        # the mirror host the machine already uses for Debian (deb.debian.org when none is found)
        mirror="$(grep -rhoE 'https?://[^ ]+/debian/?' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
            | grep -v -- '-security' | grep -v snapshot | head -n1 || true)"
        mirror="${mirror:-http://deb.debian.org/debian}"
        log "adding a trixie deb-src entry ($mirror)"
        cat >"$SRC_LIST" <<EOF
Types: deb-src
URIs: ${mirror%/}
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
        "${APT[@]}" update >/dev/null
    fi
    build="$(mktemp -d /tmp/pgvector-build.XXXXXX)"
    log "building pgvector in $build"
    (
        cd "$build"
        apt-get source -q pgvector >/dev/null 2>&1 || { "${APT[@]}" update >/dev/null && apt-get source -q pgvector >/dev/null; }
        cd "$(find . -maxdepth 1 -type d -name 'pgvector-*' | head -n1)"
        make -s OPTFLAGS="" PG_CONFIG="$PG_CONFIG" >/dev/null
        make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
    )
    rm -rf "$build"
fi

# 3. A cluster owned by postgres, listening on loopback only (trust authentication: tests only).
if [[ ! -f "$DATA/PG_VERSION" ]]; then
    log "initialising a cluster in $DATA"
    mkdir -p "$DATA"
    chown postgres:postgres "$DATA"
    chmod 700 "$DATA"
    runuser -u postgres -- "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
fi
if ! runuser -u postgres -- "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    log "starting the server on 127.0.0.1:$PORT"
    runuser -u postgres -- "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 start \
        -o "-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c shared_buffers=256MB -c maintenance_work_mem=256MB" \
        >/dev/null
fi

# 4. The test database with the vector extension.
psql_() { runuser -u postgres -- "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
if [[ "$(psql_ -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]]; then
    psql_ -d postgres -c "CREATE DATABASE \"$DB\""
fi
psql_ -d "$DB" -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector" >/dev/null
log "pgvector $(psql_ -d "$DB" -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'") ready"
echo "postgresql://postgres@127.0.0.1:${PORT}/${DB}"
