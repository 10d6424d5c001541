#!/usr/bin/env bash
# test.sh — the project's test command (README "Quick start", step 2; .ci/run calls it).
# Installs what the tests need (pinned npm packages, Go example servers), then runs
# gofmt, go vet, staticcheck, the other OSes' vet and build, and every test with the race
# detector: unit tests and the end-to-end tests in integration/ (real upstream servers, real
# clients); then every fuzz target for a short fixed time (scripts/fuzz.sh).
#
#   scripts/test.sh [extra go test flags, e.g. -run TestDirect -v]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/install-test-deps.sh" --quiet
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './integration/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
# staticcheck, pinned (the first run downloads it through the Go module proxy).
GOFLAGS= go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
# Cross-checks: the code of the other release OSes type-checks and vets (one architecture each:
# no file of ours is architecture-specific), and the Windows binary links; so a call that exists
# on one OS only cannot land. CGO_ENABLED=0 as in the release. Measured cost: docs/performance.md.
xstart=$(date +%s)
for step in "darwin/arm64 vet ./..." "windows/amd64 vet ./..." "windows/amd64 build -o /dev/null ."; do
  target=${step%% *}
  # shellcheck disable=SC2086 # the go command is several words on purpose
  if ! GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go ${step#* } 2>&1 | sed "s|^|[$target] |"; then
    echo "cross-check: go ${step#* } for $target failed" >&2
    exit 1
  fi
done
echo "cross-check: darwin and windows ok in $(( $(date +%s) - xstart )) s"
# Every test with the race detector. The end-to-end package runs every time (-count=1): what it
# tests lives outside Go's test cache (installed servers and clients, the proxy binary it builds).
go test -race -timeout 30m "$@" $(go list ./... | grep -v '/integration$')
go test -race -timeout 30m -count=1 "$@" ./integration
# Fuzzing: every fuzz target for a short fixed time
# (FUZZTIME, default 5s each; FUZZTIME=0 skips). Skipped when extra go test
# flags narrow the run, unless FUZZTIME is set.
if [ "$#" -eq 0 ] || [ -n "${FUZZTIME:-}" ]; then
  "$ROOT/scripts/fuzz.sh"
fi
