#!/usr/bin/env bash
# container.sh — build the default (static, FROM scratch) container image without pulling any
# base image: the binary is built here (CGO_ENABLED=0, version stamped), then Dockerfile.prebuilt
# copies it into an empty image. For builders that cannot reach a registry; with registry access
# use the multi-stage Dockerfile (`docker build -t mcp-toolsearch .`, `--target node` for Node.js).
#
#   scripts/container.sh [TAG]        # default TAG localhost/mcp-toolsearch:dev
#
# Uses podman if present, else docker. Exit status: 0 built, 1 a step failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TAG=${1:-localhost/mcp-toolsearch:dev}
VERSION=${VERSION:-$(sed -n 's/^var Version = "\(.*\)"$/\1/p' "$ROOT/proxy/proxy.go")-container}
if command -v podman >/dev/null; then B=(podman build --format docker); elif command -v docker >/dev/null; then B=(docker build); else
  echo "container.sh: neither podman nor docker found (Debian: apt-get install podman)" >&2; exit 1; fi
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags "-s -w -X github.com/mcp-toolsearch/mcp-toolsearch/proxy.Version=$VERSION" -o "$ctx/mcp-toolsearch" .)
mkdir -p "$ctx/tmp" "$ctx/config"
cp "$ROOT/Dockerfile.prebuilt" "$ctx/Dockerfile"
"${B[@]}" -t "$TAG" "$ctx"
echo "container.sh: built $TAG ($VERSION)" >&2
