#!/usr/bin/env bash
# fuzz.sh — runs every fuzz target for a short fixed time;
# .ci/run calls it after scripts/test.sh. Each target's seed corpus is in
# <package>/testdata/fuzz/<Target>/ (and f.Add in the test); an input that
# fails is moved out of the tree (FUZZ_FINDINGS, default $TMPDIR/mcp-toolsearch-fuzz)
# and the run fails: fix the bug, then add the input back as a named seed.
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
# Every fuzz target of this module: the `func Fuzz…(` of each package's
# test files as `go list` names them (build tags applied, nothing
# compiled), as "<package dir> <target>" lines; third_party/ holds separate
# modules and is not listed. No list is kept by hand, so a new or renamed
# target cannot be left out.
listed=$(go list -f '{{.Dir}}|{{range .TestGoFiles}}{{.}} {{end}}{{range .XTestGoFiles}}{{.}} {{end}}' ./...) ||
  { echo "fuzz: go list failed" >&2; exit 1; }
TARGETS=$(echo "$listed" | while IFS='|' read -r dir files; do
  [ -z "${files// /}" ] && continue
  rel=".${dir#"$ROOT"}"
  for f in $files; do
    sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$dir/$f"
  done | sort -u | sed "s|^|$rel |"
done)
if [ -z "$TARGETS" ]; then
  echo "fuzz: no fuzz target found (go list ./... and func Fuzz… in the test files)" >&2
  exit 1
fi
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
    # The failing input Go wrote under testdata/fuzz would fail every later
    # `go test ./$pkg`: it is moved out of the tree, to be brought back
    # only with the fix (then it stays as a seed).
    found=$(echo "$out" | sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' | head -1)
    if [ -n "$found" ] && [ -f "$pkg/$found" ]; then
      keep="${FUZZ_FINDINGS:-${TMPDIR:-/tmp}/mcp-toolsearch-fuzz}"
      mkdir -p "$keep"
      mv "$pkg/$found" "$keep/${target}-$(basename "$found")"
      echo "fuzz: the failing input is $keep/${target}-$(basename "$found") (moved out of $pkg/$found);" >&2
      echo "fuzz: fix the bug, then copy it back as a named seed: cp $keep/${target}-$(basename "$found") $pkg/testdata/fuzz/$target/<what-it-is>" >&2
    fi
    echo "fuzz: $pkg $target FAILED" >&2
    exit 1
  done
  if echo "$out" | grep -q 'no fuzz tests to fuzz'; then
    echo "fuzz: $pkg $target: go test found no such fuzz target" >&2
    exit 1
  fi
  # Go first runs the seed corpus and the inputs it kept from earlier runs
  # ($(go env GOCACHE)/fuzz) and only then tries new ones; a slow target with
  # a large kept corpus can spend all of FUZZTIME there. Say so instead of
  # an empty "execs".
  execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 || true)
  if [ -z "$execs" ]; then
    base=$(echo "$out" | grep -o 'baseline coverage: [0-9]*/[0-9]*' | tail -1 | sed 's/.*: \([0-9]*\)\/\([0-9]*\)/\1 of the \2/' || true)
    execs="no new input tried, reran ${base:-none} seed and kept inputs; go clean -fuzzcache or a longer FUZZTIME"
  fi
  echo "fuzz: $pkg $target ok ($execs, $(( $(date +%s) - t0 ))s)"
done
echo "fuzz: all targets ok in $(( $(date +%s) - start ))s"
