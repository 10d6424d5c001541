//go:build unix

package integration

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in integration/conformance/package.json) at the 2026-07-28
// requirement set, against the go-sdk's conformance server (the version in
// go.mod) on its own and behind the proxy in direct mode. Needs Node 22:
// the system node when it is 22 or later, else the node-linux-<arch> npm
// package that scripts/install-test-deps.sh installs next to the suite.

// conformanceNode returns the node binary (>= 22) and the suite's entry
// point, or skips (fails with CI=true) when they are not installed.
func conformanceNode(t *testing.T) (node, suite string) {
	t.Helper()
	dir := filepath.Join(integrationDir(t), "conformance", "node_modules")
	suite = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		missingDep(t, "the MCP conformance suite is not installed in integration/conformance/node_modules; run scripts/install-test-deps.sh")
	}
	if p, err := exec.LookPath("node"); err == nil {
		if out, err := exec.Command(p, "--version").Output(); err == nil {
			major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0])
			if major >= 22 {
				return p, suite
			}
		}
	}
	for _, arch := range []string{"x64", "arm64"} {
		p := filepath.Join(dir, "node-linux-"+arch, "bin", "node")
		if _, err := os.Stat(p); err == nil {
			return p, suite
		}
	}
	missingDep(t, "the conformance suite needs Node >= 22: neither the node on PATH nor integration/conformance/node_modules/node-linux-<arch> (Linux x64/arm64 only) provides it")
	return "", ""
}

// conformanceLine is one scenario's summary line of the suite's output:
// "✓ tools-list: 4 passed, 0 failed".
var conformanceLine = regexp.MustCompile(`(?m)^[✓✗] (\S+): (\d+) passed, (\d+) failed`)

type conformanceCount struct{ passed, failed int }

// runConformance runs the suite's server scenarios required by 2026-07-28
// against url and returns the per-scenario counts in output order, the
// output, and the folder the suite saved each scenario's checks in
// (conformanceChecks reads them).
func runConformance(t *testing.T, node, suite, url string) (names []string, counts map[string]conformanceCount, out, results string) {
	t.Helper()
	return runConformanceSet(t, node, suite, url, "--requirements", "2026-07-28")
}

// runConformanceSet is runConformance with the suite's scenario selection
// (set: "--requirements", "2025-11-25" or "--spec-version", "2025-06-18").
func runConformanceSet(t *testing.T, node, suite, url string, set ...string) (names []string, counts map[string]conformanceCount, out, results string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results = t.TempDir()
	args := append([]string{suite, "server", "--url", url}, set...)
	args = append(args, "-o", results)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	b, err := cmd.CombinedOutput()
	out = string(b)
	counts = map[string]conformanceCount{}
	for _, m := range conformanceLine.FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		names = append(names, m[1])
		counts[m[1]] = conformanceCount{p, f}
	}
	if len(names) == 0 {
		t.Fatalf("conformance suite against %s printed no scenario results (%v):\n%s", url, err, tail(out, 4000))
	}
	return names, counts, out, results
}

// conformanceChecks reads the checks the suite saved for scenario under
// results (<results>/server-<scenario>-<time>/checks.json) and returns the
// status of each check id ("SUCCESS", "FAILURE", "WARNING", ...).
func conformanceChecks(t *testing.T, results, scenario string) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(results, "server-"+scenario+"-*", "checks.json"))
	status := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ ID, Status string }
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range checks {
			status[c.ID] = c.Status
		}
	}
	return status
}

// proxyGaps reads integration/conformance/proxy-gaps.txt: the scenarios,
// or single checks of a scenario ("scenario/check-id"), the proxy is known
// to fail where the go-sdk server alone passes, one per line ("#" starts a
// comment).
func proxyGaps(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(integrationDir(t), "conformance", "proxy-gaps.txt"))
	if err != nil {
		t.Fatal(err)
	}
	gaps := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) != "" {
			gaps[strings.TrimSpace(l)] = true
		}
	}
	return gaps
}

// TestConformance2026 runs the suite at the 2026-07-28 requirement set
// against the go-sdk conformance server alone and through the proxy, logs
// both per scenario (passed/run checks), and fails when the proxy fails
// more checks of a scenario, or passes fewer, than the server alone does, unless the
// scenario, or each check it passes fewer of (the suite's checks.json), is a
// known gap (integration/conformance/proxy-gaps.txt, each with its reason; a
// scenario gap that passes is logged so the file can shrink).
// The go-sdk alone fails only the tasks extension, which the suite does
// not score.
func TestConformance2026(t *testing.T) {
	waitsMostly(t)
	node, suite := conformanceNode(t)
	srvPort := freePort(t)
	srvURL := fmt.Sprintf("http://127.0.0.1:%d/", srvPort)
	startHTTPServer(t, []string{goBinary(t, "gosdk-conformance", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"), "-http", fmt.Sprintf("127.0.0.1:%d", srvPort)}, nil, srvURL)

	pxPort := freePort(t)
	cfg := writeConfig(t, fmt.Sprintf(`[server]
transport = "http"
listen = "127.0.0.1:%d"

[upstreams.conf]
url = %s
prefix = ""
`, pxPort, tomlString(srvURL)))
	pxURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", pxPort)
	startHTTPServer(t, proxyCmd(t, cfg), nil, pxURL)
	// Ready once /healthz says so (the upstream listed).
	for deadline := time.Now().Add(readyTimeout); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := getHealthz(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", pxPort)); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy not ready after %v", readyTimeout)
		}
	}

	names, alone, _, aloneDir := runConformance(t, node, suite, srvURL)
	_, proxied, pxOut, pxDir := runConformance(t, node, suite, pxURL)
	gaps := proxyGaps(t)
	// knownChecks says whether every check of scenario n that passes on
	// the server alone but not through the proxy is a known gap of its own
	// ("n/check-id"); it names the unknown ones otherwise.
	knownChecks := func(n string) (bool, []string) {
		a, p := conformanceChecks(t, aloneDir, n), conformanceChecks(t, pxDir, n)
		var worse []string
		known := true
		for id, st := range a {
			if st == "SUCCESS" && p[id] != "SUCCESS" {
				worse = append(worse, fmt.Sprintf("%s (%s through the proxy)", id, cmp.Or(p[id], "missing")))
				known = known && gaps[n+"/"+id]
			}
		}
		slices.Sort(worse)
		return known && len(worse) > 0, worse
	}

	var tab strings.Builder
	fmt.Fprintf(&tab, "%-48s %-13s %-13s\n", "scenario (2026-07-28)", "go-sdk alone", "through proxy")
	var sa, sp conformanceCount
	for _, n := range names {
		a, p := alone[n], proxied[n]
		mark := ""
		// Worse: a check fails, or one the server alone passes is missing or
		// only a warning.
		worse := p.failed > a.failed || p.passed < a.passed
		var checksKnown bool
		var worseChecks []string
		if worse && !gaps[n] {
			checksKnown, worseChecks = knownChecks(n)
		}
		switch {
		case worse && (gaps[n] || checksKnown):
			mark = "  <- proxy (known gap)"
		case worse:
			mark = "  <- proxy"
			t.Errorf("%s: %d of %d checks pass through the proxy, %d of %d on the server alone (not a known gap in integration/conformance/proxy-gaps.txt); checks: %s", n, p.passed, p.passed+p.failed, a.passed, a.passed+a.failed, strings.Join(worseChecks, ", "))
		case gaps[n]:
			t.Logf("%s passes through the proxy now: remove it from integration/conformance/proxy-gaps.txt", n)
		}
		if _, ok := proxied[n]; !ok {
			t.Errorf("%s: no result through the proxy", n)
		}
		fmt.Fprintf(&tab, "%-48s %4d/%-8d %4d/%-8d%s\n", n, a.passed, a.passed+a.failed, p.passed, p.passed+p.failed, mark)
		sa.passed, sa.failed = sa.passed+a.passed, sa.failed+a.failed
		sp.passed, sp.failed = sp.passed+p.passed, sp.failed+p.failed
	}
	fmt.Fprintf(&tab, "%-48s %4d/%-8d %4d/%-8d\n", "total checks passed", sa.passed, sa.passed+sa.failed, sp.passed, sp.passed+sp.failed)
	t.Logf("conformance suite, passed/run checks per scenario:\n%s", tab.String())
	if t.Failed() {
		t.Logf("suite output through the proxy:\n%s", tail(pxOut, 6000))
	}
}

// conformanceClientScenarios are the client scenarios of the 2026-07-28
// requirement set that need no authorization server (the auth/* ones test
// a client's own OAuth, which the proxy's upstream leg does differently).
var conformanceClientScenarios = []string{"tools_call", "request-metadata", "sep-2322-client-request-state",
	"http-standard-headers", "http-custom-headers", "http-invalid-tool-headers", "json-schema-ref-no-deref"}

// conformanceClientLine is the summary of a client scenario:
// "Passed: 18/18, 0 failed, 0 warnings".
var conformanceClientLine = regexp.MustCompile(`(?m)^Passed: (\d+)/(\d+), (\d+) failed`)

// clientCheck is one check of a client scenario as the suite saved it:
// its status and the method of the request it was last decided on
// (details.method or details.expectedMethod).
type clientCheck struct{ status, method string }

// clientChecks reads the checks the suite saved for a client scenario run
// with -o dir (<dir>/<scenario>-<time>/checks.json), by "id name" (a
// scenario may give one id several names, one per method).
func clientChecks(t *testing.T, dir, scenario string) map[string]clientCheck {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, scenario+"-*", "checks.json"))
	out := map[string]clientCheck{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID, Name, Status string
			Details          struct{ Method, ExpectedMethod string }
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range checks {
			out[c.ID+" "+c.Name] = clientCheck{c.Status, cmp.Or(c.Details.Method, c.Details.ExpectedMethod)}
		}
	}
	return out
}

// initializeHandshake are the requests of the initialize handshake, which
// the proxy's upstream leg sends first at protocol "auto" (docs/config.md
// protocol) and a 2026-07-28 client connected directly never sends.
var initializeHandshake = map[string]bool{"initialize": true, "notifications/initialized": true}

// TestConformanceClient2026 runs the suite's client scenarios (2026-07-28
// requirement set, without auth/*) with the proxy's upstream leg as the
// client under test: the suite's scenario server is the proxy's only
// upstream, and the go-sdk conformance client (go.mod version) drives the
// scenario through the proxy's Streamable HTTP front. What the suite
// checks (MCP headers, Mcp-Param-* values and encodings, request _meta,
// requestState round trips, tools with invalid x-mcp-header left out) is
// then what the proxy sends upstream, at the default protocol "auto". Each
// check the go-sdk client connected directly passes must pass, and no
// other check may fail or warn, with one exception: a check the suite
// decided on the initialize handshake (initialize,
// notifications/initialized). At "auto" the upstream leg offers the
// initialize era first (a server of both eras then serves every client
// generation; a server that speaks only 2026-07-28 refuses it and is met
// at 2026-07-28 next), and those requests carry no 2026-07-28 headers or
// _meta; the suite keeps the details of the last request a check failed
// on, so a check that names the handshake failed on nothing else.
func TestConformanceClient2026(t *testing.T) {
	node, suite := conformanceNode(t)
	client := goBinary(t, "gosdk-conformance-client", "github.com/modelcontextprotocol/go-sdk/conformance/everything-client")
	port := freePort(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "proxied-client.sh")
	// The suite starts the command once per scenario with the scenario
	// server's URL; scenarios run one at a time, so one port serves all.
	if err := os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
cfg=$(mktemp -d)
printf '[server]\ntransport = "http"\nlisten = "127.0.0.1:%[1]d"\n[upstreams.s]\nurl = "%%s"\nprefix = ""\n' "$1" > "$cfg/config.toml"
MCP_TOOLSEARCH_STARTUP_WAIT=30s %[2]s serve --config "$cfg/config.toml" --log-level warn > "$cfg/proxy.log" 2>&1 &
pid=$!
i=0
until curl -sf http://127.0.0.1:%[1]d/healthz > /dev/null || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
%[3]s http://127.0.0.1:%[1]d/mcp
rc=$?
kill $pid; wait $pid 2>/dev/null
rm -rf "$cfg"
exit $rc
`, port, buildProxy(t), client)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		missingDep(t, "curl is not on PATH (the client scenario script waits for the proxy with it)")
	}
	run := func(command, scenario string) (passed, total int, out string, checks map[string]clientCheck) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		results := t.TempDir()
		cmd := exec.CommandContext(ctx, node, suite, "client", "--command", command, "--scenario", scenario, "-o", results)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		b, _ := cmd.CombinedOutput()
		checks = clientChecks(t, results, scenario)
		m := conformanceClientLine.FindStringSubmatch(string(b))
		if m == nil {
			return 0, 0, string(b), checks
		}
		passed, _ = strconv.Atoi(m[1])
		total, _ = strconv.Atoi(m[2])
		return passed, total, string(b), checks
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-34s %-14s %-14s %s\n", "client scenario (2026-07-28)", "go-sdk client", "through proxy", "not passed on the initialize handshake only")
	for _, sc := range conformanceClientScenarios {
		ap, at, aout, achecks := run(client, sc)
		pp, pt, pout, pchecks := run(script, sc)
		// worse: checks passed directly and not through the proxy, or
		// failing or warning through the proxy only; handshake: those the
		// suite decided on the initialize handshake.
		var worse, handshake []string
		for k, pc := range pchecks {
			ac, direct := achecks[k]
			bad := pc.status == "FAILURE" || pc.status == "WARNING"
			lost := direct && ac.status == "SUCCESS" && pc.status != "SUCCESS"
			if !lost && (!bad || direct && ac.status == pc.status) {
				continue
			}
			if initializeHandshake[pc.method] {
				handshake = append(handshake, fmt.Sprintf("%s (%s)", k, pc.status))
			} else {
				worse = append(worse, fmt.Sprintf("%s: %s through the proxy (on %s), %s directly", k, pc.status, cmp.Or(pc.method, "?"), cmp.Or(ac.status, "not run")))
			}
		}
		for k, ac := range achecks {
			if _, ok := pchecks[k]; !ok && ac.status == "SUCCESS" {
				worse = append(worse, k+": not run through the proxy, SUCCESS directly")
			}
		}
		slices.Sort(worse)
		slices.Sort(handshake)
		fmt.Fprintf(&tab, "%-34s %4d/%-9d %4d/%-9d %s\n", sc, ap, at, pp, pt, strings.Join(handshake, ", "))
		if at == 0 || len(achecks) == 0 {
			t.Errorf("%s: no result from the go-sdk client alone:\n%s", sc, tail(aout, 2000))
		}
		if len(worse) > 0 || pt == 0 || len(pchecks) == 0 {
			t.Errorf("%s: %d/%d checks pass with the proxy as the client, %d/%d with the go-sdk client alone; worse through the proxy: %s\n%s", sc, pp, pt, ap, at, strings.Join(worse, "; "), tail(pout, 3000))
		}
	}
	t.Logf("conformance suite, client scenarios, passed/run checks:\n%s", tab.String())
}
