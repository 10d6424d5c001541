#!/bin/sh
# wine-test.sh [pkg ...] — cross-build the Windows test binaries of the packages with per-OS
# code or paths and run them under Wine (wine64), printing a pass/fail summary per package.
# It installs nothing: it needs wine64 (Debian: apt-get install wine64) and, because Wine 8.0
# lacks bcryptprimitives.dll (Go >= 1.22 binaries die with "bcryptprimitives.dll not found"),
# either that DLL already in the Wine prefix or x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64)
# to build the shim scripts/wine/bcryptprimitives.c into the prefix's system32.
# A failing test whose only failure is "TempDir RemoveAll cleanup: ... Invalid function" is
# counted as wine-tmp, not fail: Go 1.26 deletes with FILE_DISPOSITION_POSIX_SEMANTICS, which
# Wine 8 answers with a status Go does not fall back on (real Windows 10 1607+ supports it).
# Env: WINE_TEST_OUT (default /tmp/wine-test), WINE_TEST_TIMEOUT seconds per package (300).
# Exit status 1 when any package has a real failure (see docs/testing.md for known ones).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
PATH=$PATH:/usr/lib/wine
export WINEDEBUG=${WINEDEBUG:--all}
if ! command -v wine64 >/dev/null 2>&1; then
	echo "wine-test: wine64 not found (Debian: apt-get install wine64); nothing run" >&2
	exit 2
fi
prefix=${WINEPREFIX:-$HOME/.wine}
if [ ! -f "$prefix/drive_c/windows/system32/bcryptprimitives.dll" ]; then
	if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
		echo "wine-test: $prefix lacks bcryptprimitives.dll and x86_64-w64-mingw32-gcc is missing to build scripts/wine/bcryptprimitives.c" >&2
		exit 2
	fi
	[ -d "$prefix/drive_c/windows/system32" ] || wine64 wineboot -i >/dev/null 2>&1
	x86_64-w64-mingw32-gcc -shared -O2 -o "$prefix/drive_c/windows/system32/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c || exit 2
fi
out=${WINE_TEST_OUT:-/tmp/wine-test}
mkdir -p "$out"
[ $# -gt 0 ] || set -- internal/logfile audit telemetry config clientconfig credentials pins redact upstream sandbox cli
bad=0
printf '%-18s %6s %6s %9s %6s %6s\n' package pass fail wine-tmp skip secs
for p in "$@"; do
	name=$(echo "$p" | tr / _)
	t0=$(date +%s)
	if ! GOOS=windows GOARCH=amd64 go test -c -o "$out/$name.test.exe" "./$p" >"$out/$name.build" 2>&1; then
		printf '%-18s build failed (%s)\n' "$p" "$out/$name.build"; bad=1; continue
	fi
	(cd "$root/$p" && timeout "${WINE_TEST_TIMEOUT:-300}" wine64 "$out/$name.test.exe" -test.v -test.short >"$out/$name.log" 2>&1)
	# Per top-level test: real failure lines are *.go:N: lines that are not TempDir cleanup.
	awk -v p="$p" -v secs=$(( $(date +%s) - t0 )) -v fails="$out/$name.fails" '
		/^=== (RUN|CONT)/ { split($3, a, "/"); cur = a[1]; next }
		/^[ \t]+[^ \t]+\.go:[0-9]+: / { if ($0 !~ /TempDir RemoveAll cleanup/) real[cur] = 1; next }
		/^--- PASS: [^\/]*\(/ { pass++ }
		/^--- SKIP: [^\/]*\(/ { skip++ }
		/^--- FAIL: [^\/]*\(/ { if (real[$3]) { fail++; print $3 > fails } else tmp++ }
		/^(panic:|FAIL$|ok )/ { if ($0 ~ /^panic/) fail++ }
		END { printf "%-18s %6d %6d %9d %6d %6d\n", p, pass, fail, tmp, skip, secs; exit fail > 0 }
	' "$out/$name.log" || bad=1
done
echo "logs and failing test names: $out/<pkg>.log, $out/<pkg>.fails"
exit $bad
