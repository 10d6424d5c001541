#!/usr/bin/env bash
# update-goja.sh — rebuild third_party/goja, the patched copy of goja (the sandbox's JavaScript
# engine) that go.mod's replace points at, from a goja version: copy the version's packages this
# module builds (with their LICENSE, go.mod and go.sum), apply third_party/goja.patch, and
# require that version in go.mod. Why the copy exists and when to drop it: third_party/README.md.
#
#   scripts/update-goja.sh [VERSION]      # VERSION defaults to the one go.mod requires
#
# Then run `go test ./sandbox` and `cd third_party/goja && go test -run TestGoValueMethodsNotExposed .`
# If the patch no longer applies, the version changed object_goreflect.go: see whether it still
# looks methods up with reflect.Type.Method / reflect.Value.Method (third_party/README.md).
# Needs: go, patch; the Go module proxy when the version is not in the module cache.
# Exit status: 0 ok, 1 a step failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD=github.com/dop251/goja
DEST="$ROOT/third_party/goja"
cd "$ROOT"
VERSION="${1:-$(go list -m -f '{{.Version}}' "$MOD")}"
. "$ROOT/scripts/patched-copy.sh"
SRC=$(module_dir "$MOD" "$VERSION")

# The goja packages the sandbox builds (goja and what it needs of its own module).
PKGS=$(cd "$SRC" && GOFLAGS=-mod=mod go list -deps . | grep "^$MOD\(/\|$\)" | sed "s|^$MOD/\{0,1\}||; s|^$|.|" | sort -u)

patched_copy "$SRC" "$DEST" "$ROOT/third_party/goja.patch" "$PKGS"
go mod edit -require="$MOD@$VERSION" -replace="$MOD=./third_party/goja"
go mod tidy
echo "update-goja: third_party/goja is $MOD $VERSION with third_party/goja.patch ($(echo $PKGS | wc -w) packages)"
