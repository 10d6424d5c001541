#!/usr/bin/env bash
# fuzz.sh — runs every fuzz target for a short fixed time (issue 14 item 9);
# scripts/test.sh calls it after the tests. Each target's seed corpus is in
# <package>/testdata/fuzz/<Target>/ (and f.Add in the test); an input that
# fails is written there by `go test` and the run fails: commit it with the fix.
#
#   FUZZTIME=5s scripts/fuzz.sh     # time per target (default 5s; 0 skips)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FUZZTIME="${FUZZTIME:-5s}"
if [ "$FUZZTIME" = "0" ]; then
  echo "fuzz: skipped (FUZZTIME=0)"
  exit 0
fi
# package  target
TARGETS="
catalog FuzzRenderInput
catalog FuzzAssignNames
catalog FuzzGlobMatch
config FuzzParse
ingest FuzzStripHidden
proxy FuzzFrontJSONRPC
sandbox FuzzWorkerProtocol
schemacheck FuzzFastAccept
schemacheck FuzzCompileTerminates
"
start=$(date +%s)
echo "$TARGETS" | while read -r pkg target; do
  [ -z "$pkg" ] && continue
  t0=$(date +%s)
  # -fuzzminimizetime 10x: minimizing every new input for the default 60 s
  # would stall a short run.
  # A bare "context deadline exceeded" with no failing input written is Go's
  # fuzzing coordinator racing its own -fuzztime deadline (go.dev/issue/75804,
  # fixed in Go 1.27; this module builds with 1.26): tried again, up to three
  # times. A real finding always writes its input to testdata/fuzz first.
  tries=0
  until out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 10x "./$pkg" 2>&1); do
    tries=$((tries + 1))
    if [ "$tries" -lt 3 ] && echo "$out" | grep -q 'context deadline exceeded' && ! echo "$out" | grep -q 'Failing input written to'; then
      echo "fuzz: $pkg $target: the coordinator's deadline race (go.dev/issue/75804), no input written; again" >&2
      continue
    fi
    echo "$out" | grep -v ' level=' | tail -30 >&2
    echo "fuzz: $pkg $target FAILED" >&2
    exit 1
  done
  echo "fuzz: $pkg $target ok ($(echo "$out" | grep -o 'execs: [0-9]*' | tail -1), $(( $(date +%s) - t0 ))s)"
done
echo "fuzz: all targets ok in $(( $(date +%s) - start ))s"
