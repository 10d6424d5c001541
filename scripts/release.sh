#!/usr/bin/env bash
# release.sh — build the release archives into dist/ with GoReleaser (snapshot mode, offline):
# mcp-toolsearch for linux, darwin and windows on amd64 and arm64 (CGO_ENABLED=0), as .tar.gz
# (.zip for Windows) with README.md, docs/*.md and examples/config.reference.toml, plus
# dist/checksums.txt (SHA-256). The version is stamped into `mcp-toolsearch version`
# (-X .../proxy.Version) as VERSION-snapshot+<commit>.
#
#   scripts/release.sh            # VERSION defaults to proxy.Version in proxy/proxy.go
#   VERSION=1.2.0 scripts/release.sh
#
# GoReleaser is pinned (GORELEASER_VERSION below) and installed with `go install` into
# ./bin (project-local, git-ignored) on first use; that needs the Go module proxy once.
# Exit status: 0 ok, 1 a step failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
GORELEASER_VERSION=v2.15.1
GR="$ROOT/bin/goreleaser-$GORELEASER_VERSION"
if [ ! -x "$GR" ]; then
  echo "[release] installing goreleaser $GORELEASER_VERSION into bin/ (once)" >&2
  tmp=$(mktemp -d)
  GOBIN="$tmp" CGO_ENABLED=0 go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
  mkdir -p "$ROOT/bin"
  mv "$tmp/goreleaser" "$GR"
  rmdir "$tmp"
fi
VERSION=${VERSION:-$(sed -n 's/^var Version = "\(.*\)"$/\1/p' proxy/proxy.go)}
[ -n "$VERSION" ] || { echo "[release] cannot read proxy.Version from proxy/proxy.go; set VERSION" >&2; exit 1; }
export MTS_VERSION="$VERSION"
# The commit from git itself: GoReleaser's .ShortCommit reads "none" in a
# repository without a remote (a local clone's worktree).
MTS_COMMIT=$(git rev-parse --short HEAD)
export MTS_COMMIT
# Offline: modules come from the local cache (GOFLAGS=-mod=mod is not needed: go.sum is complete).
"$GR" release --snapshot --clean --skip=publish,announce,sign,sbom
echo "[release] dist/:" >&2
ls -l dist/*.tar.gz dist/*.zip dist/checksums.txt >&2
