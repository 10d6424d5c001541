#!/usr/bin/env bash
# update-go-sdk.sh — rebuild third_party/go-sdk, the patched copy of the go-sdk that go.mod's
# replace points at, from a go-sdk release: copy the release's packages this module builds
# (with their LICENSE, go.mod and go.sum), apply third_party/go-sdk.patch, and require that
# release in go.mod. Why the copy exists and when to drop it: third_party/README.md.
#
#   scripts/update-go-sdk.sh [VERSION]      # VERSION defaults to the one go.mod requires
#
# Then run `go test ./...` (and `cd third_party/go-sdk && go test ./internal/json`). If the
# patch no longer applies, the release changed internal/json/json.go: see whether it still
# builds a json.Decoder per Unmarshal; if not, drop the copy (third_party/README.md).
# Needs: go, patch; the Go module proxy when the release is not in the module cache.
# Exit status: 0 ok, 1 a step failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD=github.com/modelcontextprotocol/go-sdk
DEST="$ROOT/third_party/go-sdk"
cd "$ROOT"
VERSION="${1:-$(go list -m -f '{{.Version}}' "$MOD")}"
. "$ROOT/scripts/patched-copy.sh"
SRC=$(module_dir "$MOD" "$VERSION")

# The public packages this module imports, then everything inside the go-sdk they need.
PUBLIC=$(go list -deps -test ./... | grep "^$MOD/" | grep -v "/internal/" | sed "s|^$MOD|.|")
PKGS=$(cd "$SRC" && GOFLAGS=-mod=readonly go list -deps $PUBLIC | grep "^$MOD/" | sed "s|^$MOD/||" | sort -u)

# the patch adds its tests to internal/json/json_test.go
patched_copy "$SRC" "$DEST" "$ROOT/third_party/go-sdk.patch" "$PKGS" internal/json/json_test.go
go mod edit -require="$MOD@$VERSION"
go mod tidy
echo "update-go-sdk: third_party/go-sdk is $MOD $VERSION with third_party/go-sdk.patch ($(echo $PKGS | wc -w) packages)"
