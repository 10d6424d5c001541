#!/usr/bin/env bash
# install-servers.sh — install the upstream MCP servers that mcp-toolsearch's default config.toml
# starts, inside the repository, as the user who runs it (no root, no test tools):
#
#   examples/servers/node_modules   the pinned reference servers (server-everything,
#                                   server-filesystem, server-memory) from examples/servers/
#                                   package.json + package-lock.json: `npm ci --ignore-scripts`.
#                                   Needs Node.js >= 20 and npm; without them this part is
#                                   skipped with a note (the proxy then serves the Go servers only).
#   examples/servers/bin/catalogserver
#                                   the example catalog server (./examples/catalogserver), built
#                                   with the Go of your PATH.
#
#   scripts/install-servers.sh [--force] [--quiet]
#
# Idempotent: a part is skipped when a stamp shows its inputs are unchanged and its output exists.
# First run needs the npm registry and the Go module proxy (or a warm cache). Linux and macOS.
# Exit status: 0 ok (also when Node.js is missing), 1 a step failed, 2 bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRV="$ROOT/examples/servers"
FORCE=0 QUIET=0
for a in "$@"; do
  case "$a" in
    --force) FORCE=1 ;;
    --quiet|-q) QUIET=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "install-servers: unknown option: $a (see --help)" >&2; exit 2 ;;
  esac
done

log() { [ "$QUIET" = 1 ] || echo "[install-servers] $*" >&2; }
die() { echo "[install-servers] error: $*" >&2; exit 1; }
hashof() {
  if command -v sha256sum >/dev/null; then cat "$@" | sha256sum | cut -c1-32
  else cat "$@" | shasum -a 256 | cut -c1-32; fi   # macOS
}
T_ALL=$(date +%s)

# ---------------------------------------------------------------- npm servers
NPM_ENTRIES=(
  "@modelcontextprotocol/server-everything/dist/index.js"
  "@modelcontextprotocol/server-filesystem/dist/index.js"
  "@modelcontextprotocol/server-memory/dist/index.js"
)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "note: node/npm not found: skipped the Node.js servers (everything, filesystem, memory);"
  log "      the proxy starts without them and names them in its log. Install Node.js >= 20 to add them."
else
  NODE_VERSION=$(node --version)
  NODE_MAJOR=${NODE_VERSION#v}; NODE_MAJOR=${NODE_MAJOR%%.*}
  [ "$NODE_MAJOR" -ge 20 ] || die "node $NODE_VERSION is too old for the reference servers (need >= 20)"
  NM="$SRV/node_modules"
  STAMP="$NM/.mcp-toolsearch-stamp"
  WANT="$(hashof "$SRV/package.json" "$SRV/package-lock.json") node-$NODE_VERSION"
  ok=1
  for e in "${NPM_ENTRIES[@]}"; do [ -f "$NM/$e" ] || ok=0; done
  if [ "$FORCE" = 0 ] && [ "$ok" = 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    log "npm: examples/servers/node_modules is up to date, skipped"
  else
    T=$(date +%s)
    log "npm: npm ci --ignore-scripts (in examples/servers/)"
    (cd "$SRV" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
      die "npm ci in examples/servers failed (is the npm registry reachable? npm config get registry)"
    for e in "${NPM_ENTRIES[@]}"; do [ -f "$NM/$e" ] || die "npm: missing $NM/$e after install"; done
    echo "$WANT" > "$STAMP"
    log "npm: installed in $(( $(date +%s) - T )) s"
  fi
fi

# ---------------------------------------------------------------- Go catalog server
command -v go >/dev/null || die "go not found (need Go; see go.mod for the version)"
BIN="$SRV/bin"
mkdir -p "$BIN"
STAMP="$BIN/.mcp-toolsearch-stamp"
WANT="$(cd "$ROOT" && hashof go.mod go.sum examples/catalogserver/*.go) $(go env GOVERSION)"
if [ "$FORCE" = 0 ] && [ -x "$BIN/catalogserver" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  log "go: examples/servers/bin/catalogserver is up to date, skipped"
else
  T=$(date +%s)
  log "go: go build -o examples/servers/bin/catalogserver ./examples/catalogserver"
  (cd "$ROOT" && go build -o "$BIN/catalogserver" ./examples/catalogserver) || die "go build ./examples/catalogserver failed"
  echo "$WANT" > "$STAMP"
  log "go: built in $(( $(date +%s) - T )) s"
fi

log "done in $(( $(date +%s) - T_ALL )) s"
