#!/usr/bin/env bash
# A throwaway PostgreSQL 15 + PostGIS 3 for the PostGIS integration suite's real target (ADR 0076).
#
# Sourced by .ci/run: `install_test_postgres` installs Debian's postgresql-15-postgis-3 when missing
# (root + apt only); `start_test_postgres` initialises a cluster in a temp dir, starts it on a
# free port of 127.0.0.1 and exports GEOPLANE_TEST_POSTGRES_URL (its superuser, password auth over TCP, TLS on with a
# throwaway self-signed certificate); `stop_test_postgres` stops it and removes the temp dir.
#
# Run directly (`bash .ci/postgres.sh`) it starts one, prints the export line to use in another
# shell and keeps it until Ctrl-C.

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
PG_TEST_DIR=""

_pg_installed() {
  [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] && [ -f /usr/share/postgresql/15/extension/postgis.control ]
}

install_test_postgres() {
  _pg_installed && return 0
  echo "PostgreSQL 15 + PostGIS 3 is needed by the PostGIS suite's real target; installing it with apt" >&2
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "error: postgresql-15-postgis-3 is missing and cannot be installed here (need root and apt-get)" >&2
    return 1
  fi
  if [ -z "${_APT_UPDATED:-}" ]; then apt-get update -qq && _APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    postgresql-15 postgresql-15-postgis-3 openssl >/dev/null
  # The package creates a `main` cluster on 5432 and may start it; the tests use their own.
  if command -v pg_ctlcluster >/dev/null 2>&1; then pg_ctlcluster 15 main stop >/dev/null 2>&1 || true; fi
  _pg_installed || { echo "error: PostgreSQL 15 + PostGIS 3 still not available" >&2; return 1; }
}

# Runs a command as the cluster's owner: `postgres` when we are root (initdb refuses root).
_pg_as_owner() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

_pg_free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

start_test_postgres() {
  install_test_postgres || return 1
  local started=$SECONDS password port
  PG_TEST_DIR="$(mktemp -d "${TMPDIR:-/tmp}/geoplane-pg.XXXXXX")"
  chmod 700 "$PG_TEST_DIR"
  [ "$(id -u)" = "0" ] && chown postgres: "$PG_TEST_DIR"
  password="$(openssl rand -hex 18)"
  (umask 077 && printf '%s\n' "$password" >"$PG_TEST_DIR/pwfile")
  [ "$(id -u)" = "0" ] && chown postgres: "$PG_TEST_DIR/pwfile"
  # Password (SCRAM) for TCP, so the suite's wrong-password cases are refused as on RDS; trust
  # only on the Unix socket in the temp dir (for psql by hand).
  _pg_as_owner "$PG_BIN/initdb" -D "$PG_TEST_DIR/data" -U geoplane_ci --pwfile="$PG_TEST_DIR/pwfile" \
    --auth-host=scram-sha-256 --auth-local=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null ||
    return 1
  # TLS like RDS offers it: a self-signed certificate, so prefer/require use TLS and verify-full
  # fails the certificate check.
  _pg_as_owner openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -keyout "$PG_TEST_DIR/data/server.key" -out "$PG_TEST_DIR/data/server.crt" 2>/dev/null &&
    _pg_as_owner chmod 600 "$PG_TEST_DIR/data/server.key" || return 1
  port="$(_pg_free_port)"
  # fsync etc. off: a throwaway cluster, nothing to keep across a crash; it only saves seconds.
  _pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$PG_TEST_DIR \
        -c ssl=on -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null || {
    cat "$PG_TEST_DIR/postgres.log" >&2
    return 1
  }
  export GEOPLANE_TEST_POSTGRES_URL="postgres://geoplane_ci:$password@127.0.0.1:$port/postgres"
  echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') + PostGIS on 127.0.0.1:$port" \
    "(data dir $PG_TEST_DIR, up in $((SECONDS - started)) s)" >&2
}

stop_test_postgres() {
  [ -n "$PG_TEST_DIR" ] || return 0
  if [ -f "$PG_TEST_DIR/data/postmaster.pid" ]; then
    _pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_TEST_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$PG_TEST_DIR"
  PG_TEST_DIR=""
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  trap stop_test_postgres EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  start_test_postgres
  echo "export GEOPLANE_TEST_POSTGRES_URL='$GEOPLANE_TEST_POSTGRES_URL'"
  echo "(Ctrl-C stops it and removes $PG_TEST_DIR)" >&2
  while true; do sleep 1; done
fi
