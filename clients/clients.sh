#!/usr/bin/env bash
# The admin API's TypeScript and Python clients (clients/README.md): generated from
# admin/openapi.json by pinned generators, their examples built and their tools installed from the
# registries (npm, PyPI) on first use.
#
#   clients.sh generate   regenerate the committed clients: clients/typescript/src/schema.ts
#                         (openapi-typescript) and clients/python/hookstream-admin-client
#                         (openapi-python-client); make clients
#   clients.sh check      generate into a temporary folder and fail when the committed clients
#                         differ (run generate after a change of admin/openapi.json)
#   clients.sh build      what the examples run on: tsc builds the TypeScript client and its
#                         examples into clients/typescript/dist (type-checking them against the
#                         generated schema), and the Python client is installed into the venv
#   clients.sh python     print the Python venv's interpreter (installing it first)
#
# What is installed (each once, again when its pinned list changes):
#   node, npm, python3, python3-venv   Debian's packages (apt-get) when a command is missing
#   clients/typescript/node_modules    npm ci from the committed package-lock.json
#   <data dir>/clients/venv-generate-* openapi-python-client and ruff (requirements-generate.txt)
#   <data dir>/clients/venv-*          the client's dependencies and standardwebhooks
#                                      (requirements.txt), and the generated client
# The data dir is HOOKSTREAM_DATA_DIR, default <repo>/.data.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
DATA_ROOT="${HOOKSTREAM_DATA_DIR:-$REPO/.data}"
ROOT="$DATA_ROOT/clients"
TS="$HERE/typescript"
PY="$HERE/python"
DOC="$REPO/admin/openapi.json"
PY_PROJECT=hookstream-admin-client

log() { echo "clients.sh: $*" >&2; }

# hash FILE prints the first 12 hex digits of the file's SHA-256: a venv's name follows its list.
hash() { sha256sum "$1" | cut -c1-12; }

# apt_install PACKAGE... installs Debian packages, updating the index only when they are not found
# without it.
apt_install() {
  command -v apt-get >/dev/null 2>&1 ||
    { log "$* missing and no apt-get to install it: install $* and run again"; exit 1; }
  log "installing Debian's $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; }
}

runtimes() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || apt_install nodejs npm
  # openapi-fetch needs the global fetch, Node.js 18 and later.
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
    { log "Node.js $(node --version) is too old: the TypeScript client needs 18 or later"; exit 1; }
  command -v python3 >/dev/null 2>&1 || apt_install python3 python3-venv
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    { log "Python $(python3 --version) is too old: the generated Python client needs 3.11 or later"; exit 1; }
  python3 -c 'import ensurepip, venv' 2>/dev/null || apt_install python3-venv
}

# node_modules runs npm ci unless node_modules holds what the lockfile names.
node_modules() {
  local stamp; stamp="$(hash "$TS/package-lock.json")"
  [[ -f "$TS/node_modules/.clients-stamp" && "$(cat "$TS/node_modules/.clients-stamp")" == "$stamp" ]] && return
  log "npm ci in clients/typescript"
  (cd "$TS" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$stamp" >"$TS/node_modules/.clients-stamp"
}

# venv DIR REQUIREMENTS makes DIR a venv with exactly the pinned list; the marker is written last,
# so a venv without it is an interrupted install, made again.
venv() {
  local dir="$1" reqs="$2"
  [[ -f "$dir/.installed" ]] && return
  log "installing $(basename "$reqs") from PyPI into $dir"
  rm -rf "$dir"
  mkdir -p "$ROOT"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$reqs" >&2
  touch "$dir/.installed"
}

GEN_VENV="$ROOT/venv-generate-$(hash "$PY/requirements-generate.txt")"
RUN_VENV="$ROOT/venv-$(hash "$PY/requirements.txt")"

tools() {
  mkdir -p "$ROOT"
  runtimes
  node_modules
  venv "$GEN_VENV" "$PY/requirements-generate.txt"
  venv "$RUN_VENV" "$PY/requirements.txt"
}

# generate_into DIR writes both clients under DIR as they are laid out under clients/.
generate_into() {
  local out="$1"
  mkdir -p "$out/typescript/src" "$out/python"
  (cd "$TS" && node_modules/.bin/openapi-typescript "$DOC" --default-non-nullable false --output "$out/typescript/src/schema.ts" >/dev/null 2>"$ROOT/openapi-typescript.log") ||
    { cat "$ROOT/openapi-typescript.log" >&2; log "openapi-typescript failed"; exit 1; }
  # ruff (the generator's post hooks) comes from the generator's venv.
  (cd "$out/python" && RUFF_NO_CACHE=true PATH="$GEN_VENV/bin:$PATH" openapi-python-client generate --path "$DOC" \
    --config "$PY/generator.yaml" --meta setup --output-path "$PY_PROJECT" --overwrite >"$ROOT/openapi-python-client.log" 2>&1) ||
    { cat "$ROOT/openapi-python-client.log" >&2; log "openapi-python-client failed"; exit 1; }
  # The generator warns about what it could not translate; a warning is a client that lies.
  if grep -q -i 'warning' "$ROOT/openapi-python-client.log"; then
    cat "$ROOT/openapi-python-client.log" >&2
    log "openapi-python-client warned about admin/openapi.json"
    exit 1
  fi
}

generate() {
  tools
  local tmp; tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  generate_into "$tmp"
  cp "$tmp/typescript/src/schema.ts" "$TS/src/schema.ts"
  rm -rf "${PY:?}/$PY_PROJECT"
  cp -R "$tmp/python/$PY_PROJECT" "$PY/$PY_PROJECT"
  log "regenerated clients/typescript/src/schema.ts and clients/python/$PY_PROJECT"
}

check() {
  tools
  local tmp; tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  generate_into "$tmp"
  local stale=0
  diff -u "$TS/src/schema.ts" "$tmp/typescript/src/schema.ts" >"$tmp/ts.diff" || stale=1
  diff -ru -x __pycache__ -x '*.egg-info' -x build "$PY/$PY_PROJECT" "$tmp/python/$PY_PROJECT" >"$tmp/py.diff" || stale=1
  if ((stale)); then
    head -n 60 "$tmp/ts.diff" "$tmp/py.diff" >&2
    log "the committed clients are not what the generators make of admin/openapi.json: run make clients"
    exit 1
  fi
  log "the committed clients are what the generators make of admin/openapi.json"
}

build() {
  tools
  (cd "$TS" && node_modules/.bin/tsc -p tsconfig.json >&2) || { log "tsc failed"; exit 1; }
  "$RUN_VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --force-reinstall "$PY/$PY_PROJECT" >&2
  rm -rf "$PY/$PY_PROJECT/build" "$PY/$PY_PROJECT"/*.egg-info
}

case "${1:-}" in
  generate) generate ;;
  check) check ;;
  build) build ;;
  python) tools >&2; echo "$RUN_VENV/bin/python" ;;
  *) echo "usage: clients.sh generate | check | build | python" >&2; exit 2 ;;
esac
