#!/usr/bin/env bash
# promtool for hookstream's alerting rules, installed on first use.
#
#   deploy/monitoring/promtool.sh check   # promtool check rules + promtool test rules (make test-rules)
#   deploy/monitoring/promtool.sh path    # print the promtool it uses
#   deploy/monitoring/promtool.sh -- ARGS # run promtool ARGS
#
# promtool is taken from PATH, else from <data dir>/tools/prometheus, where it is unpacked from
# Debian's `prometheus` package (apt-get download + dpkg -x: nothing is installed system-wide and
# no Prometheus service is set up or started). Variables: HOOKSTREAM_DATA_DIR (<repo>/.data).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
data_root=${HOOKSTREAM_DATA_DIR:-$repo/.data}
tools=$data_root/tools/prometheus
bundled=$tools/usr/bin/promtool

say() { printf 'promtool.sh: %s\n' "$*" >&2; }

install_promtool() {
	if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
		say "no promtool on PATH and no apt-get/dpkg to fetch Debian's prometheus package; install promtool (Prometheus 2.x+)"
		return 1
	fi
	local tmp
	tmp=$(mktemp -d)
	# As root, apt drops to the _apt user for downloads, which cannot write into a private temp
	# directory; download as ourselves instead.
	local opts=()
	[ "$(id -u)" -eq 0 ] && opts=(-o APT::Sandbox::User=root)
	say "unpacking promtool from Debian's prometheus package into $tools"
	if ! (cd "$tmp" && apt-get "${opts[@]}" download -qq prometheus >/dev/null 2>&1); then
		# No package lists yet (a fresh machine): fetch them, then try again.
		if [ "$(id -u)" -eq 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2; fi
		(cd "$tmp" && apt-get "${opts[@]}" download -qq prometheus >&2) ||
			{ say "apt-get download prometheus failed"; rm -rf "$tmp"; return 1; }
	fi
	mkdir -p "$(dirname "$tools")"
	rm -rf "$tools.partial"
	dpkg -x "$tmp"/prometheus_*.deb "$tools.partial"
	rm -rf "$tmp"
	rm -rf "$tools"
	mv "$tools.partial" "$tools"
	"$bundled" --version >/dev/null
}

promtool_path() {
	if command -v promtool >/dev/null; then command -v promtool; return; fi
	[ -x "$bundled" ] || install_promtool
	echo "$bundled"
}

case "${1:-}" in
check)
	pt=$(promtool_path)
	"$pt" check rules "$here/alerts.yml" "$here/receiver-alerts.yml"
	# test rules resolves rule_files relative to each test file.
	"$pt" test rules "$here"/tests/*_test.yml
	;;
path) promtool_path ;;
--)
	shift
	exec "$(promtool_path)" "$@"
	;;
*)
	echo "usage: $0 check | path | -- ARGS" >&2
	exit 2
	;;
esac
