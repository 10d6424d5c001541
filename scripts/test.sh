#!/usr/bin/env bash
# test.sh — the project's test command (README "Quick start", step 2; .ci/run calls it).
# Installs what the tests need (pinned npm packages, Go example servers), then runs
# gofmt, go vet and every test with the race detector: unit tests and the end-to-end
# tests in integration/ (real upstream servers, real clients); then every fuzz target
# for a short fixed time (scripts/fuzz.sh).
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
# Cross-builds: build and vet for every release target, so a call that exists on one OS
# only can never land again. CGO_ENABLED=0 as in the release. linux/amd64 is covered natively
# by the go vet above and the tests below. Measured cost: docs/performance.md.
xstart=$(date +%s)
for target in linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  t0=$(date +%s)
  for step in "build -o /dev/null" vet; do
    # shellcheck disable=SC2086 # $step is two words on purpose
    if ! GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go $step ./... 2>&1 | sed "s|^|[$target ${step%% *}] |"; then
      echo "cross-build: go ${step%% *} for $target failed" >&2
      exit 1
    fi
  done
  echo "cross-build: $target build + vet ok ($(( $(date +%s) - t0 )) s)"
done
echo "cross-build: linux/amd64 (native) + 5 targets ok in $(( $(date +%s) - xstart )) s"
go test -race -timeout 30m "$@" ./...
# Fuzzing (issue 14 item 9): every fuzz target for a short fixed time
# (FUZZTIME, default 5s each; FUZZTIME=0 skips). Skipped when extra go test
# flags narrow the run, unless FUZZTIME is set.
if [ "$#" -eq 0 ] || [ -n "${FUZZTIME:-}" ]; then
  "$ROOT/scripts/fuzz.sh"
fi
