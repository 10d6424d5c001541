#!/usr/bin/env bash
# test.sh — the project's test command (README "Quick start", step 2; .ci/run calls it).
# Installs what the tests need (pinned npm packages, Go example servers), then runs
# gofmt, go vet, staticcheck, the other OSes' vet and build, and every test with the race
# detector: unit tests and the end-to-end tests in integration/ (real upstream servers, real
# clients). Fuzzing for a fixed time is scripts/fuzz.sh, which .ci/run runs after this
# (the seed corpora run here, as every go test does). Each step prints when it ended.
#
#   scripts/test.sh [extra go test flags, e.g. -run TestDirect -v]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
began=$(date +%s)
step() { echo "test.sh: $1 ok at $(( $(date +%s) - began )) s"; }
"$ROOT/scripts/install-test-deps.sh" --quiet
step "installing the test dependencies"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './integration/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
step "gofmt and go vet"
# staticcheck, pinned (the first run downloads it through the Go module proxy).
GOFLAGS= go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
step staticcheck
# Cross-checks: the code of the other release OSes type-checks and vets (one architecture each:
# no file of ours is architecture-specific), and the Windows binary links; so a call that exists
# on one OS only cannot land. CGO_ENABLED=0 as in the release. Measured cost: docs/performance.md.
crosscheck() {
  for check in "darwin/arm64 vet ./..." "windows/amd64 vet ./..." "windows/amd64 build -o /dev/null ."; do
    target=${check%% *}
    # shellcheck disable=SC2086 # the go command is several words on purpose
    if ! GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 nice -n 10 go ${check#* } 2>&1 | sed "s|^|[$target] |"; then
      echo "cross-check: go ${check#* } for $target failed"
      return 1
    fi
  done
}
# Every test with the race detector. The end-to-end package runs every time (-count=1): what it
# tests lives outside Go's test cache (installed servers and clients, the proxy binary it builds).
# -p 4: four packages at a time, so a package whose tests mostly wait (upstream/) does not hold
# one of the two build and test slots of a 2-core machine.
go test -race -timeout 30m -p 4 "$@" $(go list ./... | grep -v '/integration$')
step "unit tests"
# The end-to-end tests mostly wait on servers and clients, so the cross-checks (compiling for two
# other OSes) run beside them at a lower priority; their verdict comes after the tests.
xlog=$(mktemp)
crosscheck > "$xlog" 2>&1 &
xpid=$!
trap 'pkill -P "$xpid" 2>/dev/null || true; kill "$xpid" 2>/dev/null || true; rm -f "$xlog"' EXIT
# -parallel 6: the end-to-end tests marked waitsMostly wait on real servers and clients
# side by side (integration/harness_test.go); the others run first, one at a time.
go test -race -timeout 30m -count=1 -parallel 6 "$@" ./integration
step "end-to-end tests"
if ! wait "$xpid"; then
  cat "$xlog" >&2
  exit 1
fi
cat "$xlog"
step "darwin and windows checks"
