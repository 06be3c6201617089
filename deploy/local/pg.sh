#!/usr/bin/env bash
# Local PostgreSQL for hookstream: a private cluster under .data/pg on 127.0.0.1:54329 with
# wal_level=logical (cdc tails the outbox by logical replication, R10).
#
#   deploy/local/pg.sh up | down | crash | status | url
#
# Idempotent: `up` on a running cluster succeeds, `down` on a stopped one succeeds. `crash` stops
# it as a power cut would (pg_ctl -m immediate: no checkpoint, crash recovery at the next `up`),
# for the chaos run's private cluster. `up` prints the cluster's URL.
# Variables: PG_PORT (54329), HOOKSTREAM_DATA_DIR (<repo>/.data), PG_DATA (the cluster's folder:
# <data dir>/pg on port 54329, <data dir>/pg-<port> on another, so a second cluster can run beside
# the first), PG_DATABASE (hookstream). A cluster is made for one port: `up` refuses a PG_DATA
# initialised for another, and a port another server holds.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data_root=${HOOKSTREAM_DATA_DIR:-$repo/.data}
port=${PG_PORT:-54329}
if [ "$port" = 54329 ]; then default_pgdata=$data_root/pg; else default_pgdata=$data_root/pg-$port; fi
pgdata=${PG_DATA:-$default_pgdata}
dbname=${PG_DATABASE:-hookstream}
logfile=$pgdata.log

say() { printf 'pg: %s\n' "$*" >&2; }

# find_bindir prints the directory holding initdb, pg_ctl and postgres of version 15 or later:
# PATH first (resolving symlinks to the real bin directory), then /usr/lib/postgresql/*/bin.
find_bindir() {
	local cand dir ver
	if cand=$(command -v initdb 2>/dev/null); then
		dir=$(dirname "$(readlink -f "$cand")")
		if [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
			ver=$("$dir/postgres" --version | sed -E 's/[^0-9]*([0-9]+).*/\1/')
			if [ "$ver" -ge 15 ]; then echo "$dir"; return 0; fi
		fi
	fi
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
		if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
			ver=$(basename "$(dirname "$dir")")
			if [ "$ver" -ge 15 ] 2>/dev/null; then echo "$dir"; return 0; fi
		fi
	done
	return 1
}

bindir() {
	local dir
	if dir=$(find_bindir); then echo "$dir"; return 0; fi
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		say "no PostgreSQL 15+ server binaries found; installing Debian's postgresql"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
		# Debian starts its own cluster on 5432; we only want the binaries.
		if command -v pg_ctlcluster >/dev/null; then
			for c in $(ls /etc/postgresql 2>/dev/null); do pg_ctlcluster "$c" main stop >/dev/null 2>&1 || true; done
		fi
		if dir=$(find_bindir); then echo "$dir"; return 0; fi
	fi
	say "no PostgreSQL 15+ server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin"
	return 1
}

# as_owner runs a command as the cluster's owner: the postgres user when invoked as root,
# because the server refuses to run as root.
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

ensure_owner() {
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi
}

is_running() {
	local bin=$1
	[ -f "$pgdata/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$pgdata" status >/dev/null 2>&1
}

# psql_bin prints the psql to use: the one beside the server binaries, else PATH's; as root with
# apt-get and none found, it installs Debian's postgresql-client.
psql_bin() {
	local bin=$1
	if [ -x "$bin/psql" ]; then echo "$bin/psql"; return 0; fi
	if command -v psql >/dev/null; then command -v psql; return 0; fi
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		say "no psql found; installing Debian's postgresql-client"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-client >&2
		if command -v psql >/dev/null; then command -v psql; return 0; fi
	fi
	say "no psql beside the server binaries ($bin) or on PATH"
	return 1
}

psql_cmd() {
	"$psql" -X -q -h 127.0.0.1 -p "$port" -U postgres "$@"
}

# port_taken reports whether something accepts connections on 127.0.0.1:$port.
port_taken() {
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

# configured_port prints the port a cluster was initialised for (its postgresql.conf).
configured_port() {
	sed -nE 's/^port = ([0-9]+).*/\1/p' "$pgdata/postgresql.conf" | tail -n 1
}

up() {
	local bin psql
	bin=$(bindir)
	psql=$(psql_bin "$bin")
	ensure_owner
	mkdir -p "$data_root"
	if [ "$(id -u)" -eq 0 ]; then
		# The owner needs to reach .data/pg through the checkout, wherever it lies.
		chmod o+x "$data_root"
		d=$data_root
		while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
	fi
	if ! is_running "$bin" && port_taken; then
		say "127.0.0.1:$port is taken by another server: PG_PORT picks another port, or point HOOKSTREAM_DATABASE_URL at that server"
		exit 1
	fi
	if [ -f "$pgdata/PG_VERSION" ] && [ "$(configured_port)" != "$port" ]; then
		say "$pgdata holds a cluster for port $(configured_port), not $port: set PG_DATA to another folder for port $port"
		exit 1
	fi
	if [ ! -f "$pgdata/PG_VERSION" ]; then
		say "initialising $pgdata"
		mkdir -p "$pgdata"
		if [ "$(id -u)" -eq 0 ]; then chown postgres: "$pgdata"; fi
		chmod 700 "$pgdata"
		as_owner "$bin/initdb" -D "$pgdata" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
		cat >>"$pgdata/postgresql.conf" <<CONF

# hookstream local cluster
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = ''
wal_level = logical
max_replication_slots = 64
max_wal_senders = 64
max_connections = 300
wal_sender_timeout = 60s
fsync = on
shared_buffers = 256MB
max_wal_size = 2GB
log_min_messages = warning
CONF
		cat >"$pgdata/pg_hba.conf" <<HBA
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
HBA
	fi
	if is_running "$bin"; then
		say "already running on 127.0.0.1:$port"
	else
		touch "$logfile"
		if [ "$(id -u)" -eq 0 ]; then chown postgres: "$logfile"; fi
		# A crashed server leaves a stale pid file; pg_ctl handles that itself.
		as_owner "$bin/pg_ctl" -D "$pgdata" -l "$logfile" -w -t 60 start >/dev/null ||
			{ say "start failed; last log lines:"; tail -n 30 "$logfile" >&2; exit 1; }
		say "started on 127.0.0.1:$port"
	fi
	if ! psql_cmd -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$dbname'" | grep -q 1; then
		psql_cmd -d postgres -c "CREATE DATABASE $dbname" >/dev/null
		say "created database $dbname"
	fi
	url
}

# stop_server stops the cluster with pg_ctl's shutdown mode $1 and then says $2.
stop_server() {
	local bin
	if ! bin=$(find_bindir); then say "no PostgreSQL binaries; nothing to stop"; return 0; fi
	if is_running "$bin"; then
		as_owner "$bin/pg_ctl" -D "$pgdata" -m "$1" -w -t 60 stop >/dev/null
		say "$2"
	else
		say "not running"
	fi
}

down() { stop_server fast "stopped"; }

# crash stops the cluster without a checkpoint, as a power cut does.
crash() { stop_server immediate "stopped immediately"; }

status() {
	local bin
	bin=$(find_bindir) || { echo "not running"; return 1; }
	if is_running "$bin"; then echo "running on 127.0.0.1:$port"; else echo "not running"; return 1; fi
}

url() {
	echo "postgres://postgres@127.0.0.1:$port/$dbname?sslmode=disable"
}

case "${1:-}" in
up) up ;;
down) down ;;
crash) crash ;;
status) status ;;
url) url ;;
*) echo "usage: $0 up|down|crash|status|url" >&2; exit 2 ;;
esac
