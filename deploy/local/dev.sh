#!/usr/bin/env bash
# The quick start (make dev): a database for `hookstream dev`, then `hookstream dev`.
#
#   deploy/local/dev.sh [flags of hookstream dev...]
#
# With HOOKSTREAM_DATABASE_URL set, dev uses that database (an existing PostgreSQL 15+ with
# wal_level=logical whose user may create a replication slot) and no cluster is started.
# Without it, deploy/local/pg.sh starts the local cluster (PG_PORT, PG_DATA, HOOKSTREAM_DATA_DIR
# as it documents) and dev uses its URL.
# HOOKSTREAM_BIN runs that hookstream binary (make dev gives bin/hookstream of `make build`);
# without it the script builds bin/hookstream with ${GO:-go} first. Never `go run`: go exits 1
# when interrupted whatever the program's status, and Ctrl-C must end dev with its own 0.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

if [ -n "${HOOKSTREAM_DATABASE_URL:-}" ]; then
	echo "dev: using HOOKSTREAM_DATABASE_URL; no local PostgreSQL started" >&2
else
	HOOKSTREAM_DATABASE_URL=$(bash deploy/local/pg.sh up)
	export HOOKSTREAM_DATABASE_URL
fi

if [ -z "${HOOKSTREAM_BIN:-}" ]; then
	"${GO:-go}" build -o bin/hookstream ./cmd/hookstream
	HOOKSTREAM_BIN=bin/hookstream
fi
exec "$HOOKSTREAM_BIN" dev "$@"
