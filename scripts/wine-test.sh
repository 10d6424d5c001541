#!/bin/sh
# wine-test.sh [pkg ...] — cross-build the Windows test binaries (GOOS=windows go test -c) and
# run them under Wine (wine64), printing pass / fail / skip per package. With no arguments it
# runs every package that has tests for Windows (integration/ is Unix-only: none there).
# Needs wine64 (Debian: apt-get install wine64) and, because Wine 8.0 lacks bcryptprimitives.dll
# (Go >= 1.22 binaries die with "bcryptprimitives.dll not found"), x86_64-w64-mingw32-gcc
# (Debian: gcc-mingw-w64-x86-64) to build the stand-in scripts/wine/bcryptprimitives.c into the
# Wine prefix's system32 (rebuilt when the source changes; see the file for what it does).
# scripts/install-test-deps.sh installs both. Missing wine64 or mingw: skipped with exit 0,
# except under CI=true, where it is an error (exit 1).
# Env: WINE_TEST_OUT (default /tmp/wine-test), WINE_TEST_TIMEOUT seconds per package (900; proxy takes 3-5 min on a loaded machine),
#      WINEPREFIX (default ~/.wine; created on first use).
# A test that fails and then passes when its package's failed tests run once more is counted
# as passed and listed as FLAKY with its first failure (Wine now and then fails to start a
# process). Exit status 1 when any package fails to build or has a test that fails twice;
# logs in $WINE_TEST_OUT (<pkg>.log, <pkg>.rerun.log).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
PATH=$PATH:/usr/lib/wine
export WINEDEBUG=${WINEDEBUG:--all}
missing() {
	if [ "${CI:-}" = true ]; then
		echo "wine-test: error: $1 (CI=true: the Windows tests must run; scripts/install-test-deps.sh installs it)" >&2
		exit 1
	fi
	echo "wine-test: skipped: $1 (scripts/install-test-deps.sh installs it)" >&2
	exit 0
}
command -v wine64 >/dev/null 2>&1 || missing "wine64 not found (Debian: apt-get install wine64)"
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 ||
	missing "x86_64-w64-mingw32-gcc not found to build scripts/wine/bcryptprimitives.c (Debian: apt-get install gcc-mingw-w64-x86-64)"
prefix=${WINEPREFIX:-$HOME/.wine}
sys32=$prefix/drive_c/windows/system32
if [ ! -d "$sys32" ]; then
	t0=$(date +%s)
	wine64 wineboot -i >/dev/null 2>&1
	wineserver -w 2>/dev/null
	[ -d "$sys32" ] || { echo "wine-test: wineboot did not create $sys32" >&2; exit 1; }
	echo "wine-test: created the Wine prefix $prefix in $(( $(date +%s) - t0 )) s"
fi
shim=scripts/wine/bcryptprimitives.c
want=$(sha256sum "$shim" | cut -c1-32)
if [ ! -f "$sys32/bcryptprimitives.dll" ] || [ "$(cat "$sys32/bcryptprimitives.dll.src" 2>/dev/null)" != "$want" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -Wall -o "$sys32/bcryptprimitives.dll" "$shim" || exit 1
	echo "$want" >"$sys32/bcryptprimitives.dll.src"
fi
out=${WINE_TEST_OUT:-/tmp/wine-test}
mkdir -p "$out"
[ $# -gt 0 ] || set -- $(GOOS=windows go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./... | sed "s|^$root\$|.|; s|^$root/||")
bad=0 tpass=0 tfail=0 tskip=0 tflaky=0 start=$(date +%s)
printf '%-22s %6s %6s %6s %6s\n' package pass fail skip secs
for p in "$@"; do
	name=$(echo "$p" | tr / _)
	[ "$p" != . ] || name=main
	t0=$(date +%s)
	rm -f "$out/$name.fails" "$out/$name.rerun.log"
	if ! GOOS=windows GOARCH=amd64 go test -c -o "$out/$name.test.exe" "./$p" >"$out/$name.build" 2>&1; then
		printf '%-22s build failed (%s)\n' "$p" "$out/$name.build"; bad=1; continue
	fi
	# cwd = the package folder, as go test does (testdata/).
	(cd "$root/$p" && timeout "${WINE_TEST_TIMEOUT:-900}" wine64 "$out/$name.test.exe" -test.v -test.short >"$out/$name.log" 2>&1)
	rc=$?
	# Count top-level tests; the binary's own exit status decides (a panic or timeout fails too).
	line=$(awk -v fails="$out/$name.fails" '
		/^--- PASS: [^\/]*\(/ { pass++ }
		/^--- SKIP: [^\/]*\(/ { skip++ }
		/^--- FAIL: [^\/]*\(/ { fail++; print $3 > fails }
		END { printf "%d %d %d", pass, fail, skip }' "$out/$name.log")
	np=${line%% *}; rest=${line#* }; nf=${rest%% *}; ns=${rest#* }
	if [ "$rc" != 0 ] && [ "$nf" = 0 ]; then nf=1; echo "(exit $rc)" >>"$out/$name.fails"; fi
	# Wine itself now and then fails to start a process (a Go test that spawns one gets
	# "fork/exec ...: Internal error.", Wine's answer when the new process died before it ran;
	# 1 run in dozens, never the same test). So the failed tests, and only they, run once
	# more; a test that passes then is counted as passed and listed as FLAKY with its first
	# failure, one that fails again fails. Only a run that ended as failing tests end (exit 1)
	# is rerun: a panic (2) or a timeout (124) fails the package whatever a rerun says.
	flaky=
	if [ "$rc" = 1 ] && [ "$nf" != 0 ]; then
		re=$(paste -sd'|' "$out/$name.fails")
		(cd "$root/$p" && timeout "${WINE_TEST_TIMEOUT:-900}" wine64 "$out/$name.test.exe" -test.v -test.short -test.run "^($re)\$" >"$out/$name.rerun.log" 2>&1)
		for f in $(cat "$out/$name.fails"); do
			grep -q "^--- PASS: $f (" "$out/$name.rerun.log" || { echo "$f"; continue; }
			flaky="$flaky $f" np=$((np + 1)) nf=$((nf - 1)) tflaky=$((tflaky + 1))
		done >"$out/$name.fails2"
		mv "$out/$name.fails2" "$out/$name.fails"
	fi
	[ "$nf" = 0 ] || bad=1
	tpass=$((tpass + np)) tfail=$((tfail + nf)) tskip=$((tskip + ns))
	printf '%-22s %6d %6d %6d %6d\n' "$p" "$np" "$nf" "$ns" $(( $(date +%s) - t0 ))
	[ "$nf" = 0 ] || sed 's/^/    FAIL /' "$out/$name.fails"
	for f in $flaky; do
		echo "    FLAKY $f: failed, then passed on a rerun ($out/$name.rerun.log); first failure:"
		awk -v t="$f" '$0 == "=== RUN   " t { on = 1; next } on && /^(=== RUN|--- )/ { exit } on { print "      " $0 }' "$out/$name.log" | head -5
	done
done
echo "wine-test: $# packages in $(( $(date +%s) - start )) s; logs: $out/<pkg>.log"
echo "wine-test: $tpass passed ($tflaky of them on a rerun), $tfail failed, $tskip skipped"
exit $bad
