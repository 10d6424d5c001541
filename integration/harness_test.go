//go:build unix

// Package integration holds the end-to-end tests of mcp-toolsearch: the real
// binary, real third-party upstream MCP servers (npm and Go), and real
// clients (the official TypeScript SDK via client.mjs, mark3labs/mcp-go, the
// official go-sdk).
//
// Setup: scripts/install-test-deps.sh installs the pinned npm packages into
// integration/node_modules (and Go example servers into integration/.bin for
// manual use; the tests build their Go binaries themselves). Tests that need
// Node skip with a message when node_modules is missing, unless the
// environment has CI=true, where a missing dependency fails the test.
//
// The tests drive processes the Unix way (process groups, signals, and the
// process table: /proc on Linux, ps(1) elsewhere; see procs_test.go),
// so every file carries `//go:build unix`; on Windows the package is empty.
//
// This file holds the shared helpers and TestMain; proxy_*_test.go files hold
// the proxy's own scenarios.
package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testport"
)

// Fail-safe bounds: they stop a hung test, they are not assertions on speed.
const (
	nodeClientTimeout = 90 * time.Second // one client.mjs run
	readyTimeout      = 30 * time.Second // a started server opening its port
	stopGrace         = 5 * time.Second  // SIGTERM to SIGKILL at cleanup
	goClientTimeout   = 30 * time.Second // initialize of the Go clients
)

// binDir holds binaries built once per test binary (proxy, catalogserver, ...).
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-toolsearch-itest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: temp dir:", err)
		os.Exit(1)
	}
	binDir = dir
	// Every proxy these tests start waits for all its upstreams, however
	// loaded the machine: the tests expect them in the first answers. The
	// default server.startup_wait (5s) is tested with --startup-wait
	// (faults_test.go), which wins over this.
	os.Setenv("MCP_TOOLSEARCH_STARTUP_WAIT", "2m")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// inCI reports whether missing test dependencies must fail rather than skip
// (environment CI=true, as set by GitHub Actions and most CI systems).
func inCI() bool { return os.Getenv("CI") == "true" }

// missingDep skips the test (locally) or fails it (CI=true) because a
// dependency is missing; why says what and how to install it.
func missingDep(t testing.TB, why string) {
	t.Helper()
	if inCI() {
		t.Fatalf("missing test dependency (CI=true, so this fails instead of skipping): %s", why)
	}
	t.Skipf("skipping: %s", why)
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// repoRoot returns the absolute path of the repository root: the nearest
// directory at or above the working directory whose go.mod declares module
// github.com/mcp-toolsearch/mcp-toolsearch. It fails the test when there is none.
func repoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/mcp-toolsearch/mcp-toolsearch")) {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("no go.mod with module github.com/mcp-toolsearch/mcp-toolsearch at or above the working directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		t.Fatalf("repoRoot: %v", rootErr)
	}
	return rootDir
}

// integrationDir returns <repo>/integration.
func integrationDir(t testing.TB) string { return filepath.Join(repoRoot(t), "integration") }

type buildResult struct {
	once sync.Once
	path string
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*buildResult{}
)

// gosdkModule is the go-sdk's module path.
const gosdkModule = "github.com/modelcontextprotocol/go-sdk"

// goBinary builds Go package pkg (an import path, or a path relative to the
// repo root such as "./examples/catalogserver") with `go build -mod=readonly`
// from the repo root, once per test binary, into a shared temp dir under the
// name name, and returns the binary's path. Versions of packages outside the
// repo come from go.mod; the go-sdk's are built as released. A build error fails every test that asks for it,
// with the compiler output.
func goBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	root := repoRoot(t)
	buildsMu.Lock()
	b, ok := builds[pkg]
	if !ok {
		b = &buildResult{}
		builds[pkg] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		out := filepath.Join(binDir, name)
		cmd := exec.Command("go", "build", "-mod=readonly", "-o", out, pkg)
		cmd.Dir = root
		if _, err := os.Stat(filepath.Join(root, pkg, "go.mod")); err == nil && strings.HasPrefix(pkg, "./") {
			// A folder with a module of its own (integration/relay: its
			// fasthttp stays out of the product's go.mod) builds there.
			cmd.Args[len(cmd.Args)-1] = "."
			cmd.Dir = filepath.Join(root, pkg)
		}
		if strings.HasPrefix(pkg, gosdkModule+"/") {
			b.path, b.err = goInstallReleased(root, binDir, name, pkg)
			return
		}
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
			return
		}
		b.path = out
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// goInstallReleased builds pkg, a package of the go-sdk, as released at
// the version go.mod requires: go.mod replaces the go-sdk with a patched
// copy (third_party/README.md), and `go install pkg@version` ignores the
// replace. The binary is binDir/name.
func goInstallReleased(root, binDir, name, pkg string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", gosdkModule)
	cmd.Dir = root
	v, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v", gosdkModule, err)
	}
	gobin := filepath.Join(binDir, "gobin-"+name)
	cmd = exec.Command("go", "install", pkg+"@"+strings.TrimSpace(string(v)))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, msg)
	}
	out := filepath.Join(binDir, name)
	return out, os.Rename(filepath.Join(gobin, path.Base(pkg)), out)
}

// buildProxy returns the path of the mcp-toolsearch binary built from the
// repo root's main package (once per test binary). With the environment
// variable MCP_TOOLSEARCH_BIN set, it returns that path instead (a prebuilt
// binary, e.g. a race-enabled or release build), failing if it is missing.
func buildProxy(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MCP_TOOLSEARCH_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("MCP_TOOLSEARCH_BIN: %v", err)
		}
		return p
	}
	return goBinary(t, "mcp-toolsearch", ".")
}

// catalogServer returns the path of the examples/catalogserver binary.
func catalogServer(t testing.TB) string {
	t.Helper()
	return goBinary(t, "catalogserver", "./examples/catalogserver")
}

// catalogFile returns the absolute path of examples/catalogs/<name>.
func catalogFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "examples", "catalogs", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("catalogFile: %v", err)
	}
	return p
}

// gosdkEverything returns the go-sdk "everything" example server (version
// from go.mod); it speaks stdio by default and Streamable HTTP with
// -http HOST:PORT. Its tool names contain spaces and parentheses.
func gosdkEverything(t testing.TB) string {
	t.Helper()
	return goBinary(t, "gosdk-everything", "github.com/modelcontextprotocol/go-sdk/examples/server/everything")
}

// mcpgoEverything returns the mark3labs/mcp-go "everything" example server
// (version from go.mod); use it over stdio with args "-t", "stdio" (its HTTP
// mode binds the fixed port :8080 on all interfaces, avoid it in tests).
func mcpgoEverything(t testing.TB) string {
	t.Helper()
	return goBinary(t, "mcpgo-everything", "github.com/mark3labs/mcp-go/examples/everything")
}

// requireNode skips (or, with CI=true, fails) the test unless node is on
// PATH and scripts/install-test-deps.sh has installed integration/node_modules.
func requireNode(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		missingDep(t, "node (>= 20) is not on PATH")
	}
	sdk := filepath.Join(integrationDir(t), "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(sdk); err != nil {
		missingDep(t, "integration/node_modules is not installed; run scripts/install-test-deps.sh")
	}
}

// npmServer returns the command that starts one of the pinned reference
// servers from integration/node_modules over stdio:
// name is "everything", "filesystem", "memory" or "sequential-thinking".
// Append transport arguments yourself (server-everything: "streamableHttp"
// or "sse" with env PORT=N; server-filesystem: allowed directories).
// server-memory writes its store inside its package folder unless the env
// MEMORY_FILE_PATH is set: set it to a temp file.
func npmServer(t testing.TB, name string) []string {
	t.Helper()
	requireNode(t)
	js := filepath.Join(integrationDir(t), "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
	if _, err := os.Stat(js); err != nil {
		missingDep(t, fmt.Sprintf("npm server %q not installed (%v); run scripts/install-test-deps.sh", name, err))
	}
	return []string{"node", js}
}

// lockedBuffer is an io.Writer safe for a process's output and a test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tail returns at most the last n bytes of s, for error messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// nodeClientRun runs `node integration/client.mjs args...` (see client.mjs
// for the options and the output document), in its own process group killed
// after nodeClientTimeout, and returns the decoded JSON document, the exit
// code and the client's stderr (which includes a stdio server's stderr unless
// --quiet). It fails the test only when stdout is not one JSON document.
func nodeClientRun(t testing.TB, args ...string) (doc map[string]any, exitCode int, stderr string) {
	t.Helper()
	requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), nodeClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(integrationDir(t), "client.mjs")}, args...)...)
	cmd.Dir = integrationDir(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = stopGrace
	var out bytes.Buffer
	var errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("client.mjs %q: %v", args, runErr)
	}
	exitCode = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Fatalf("client.mjs %q: killed after %v\nstderr: %s", args, nodeClientTimeout, tail(errb.String(), 4000))
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("client.mjs %q: exit %d (%v), stdout is not JSON: %v\nstdout: %s\nstderr: %s", args, exitCode, runErr, err, tail(out.String(), 2000), tail(errb.String(), 4000))
	}
	return doc, exitCode, errb.String()
}

// nodeClient is nodeClientRun for the common case: it fails the test unless
// client.mjs connected and ran every step (exit 0). Step-level errors are in
// the document (steps[i].error) and are for the caller to check.
func nodeClient(t testing.TB, args ...string) map[string]any {
	t.Helper()
	doc, code, stderr := nodeClientRun(t, args...)
	if code != 0 {
		t.Fatalf("client.mjs %q: exit %d, error %v\nstderr: %s", args, code, doc["error"], tail(stderr, 4000))
	}
	return doc
}

// nodeClientsAtOnce runs nodeClient for each named argument list at the
// same time, each as a subtest of t, and returns the documents by name;
// t stops when any run failed.
func nodeClientsAtOnce(t *testing.T, runs map[string][]string) map[string]map[string]any {
	t.Helper()
	docs := make(map[string]map[string]any, len(runs))
	var mu sync.Mutex
	t.Run("clients", func(t *testing.T) {
		for name, args := range runs {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				doc := nodeClient(t, args...)
				mu.Lock()
				defer mu.Unlock()
				docs[name] = doc
			})
		}
	})
	if len(docs) != len(runs) {
		t.FailNow()
	}
	return docs
}

// scriptArg encodes client.mjs steps for --script.
func scriptArg(t testing.TB, steps ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Proc is a process started by startProcess: it runs in its own process
// group, which cleanup terminates (SIGTERM, then SIGKILL after stopGrace).
type Proc struct {
	Cmd    *exec.Cmd
	output *lockedBuffer
	done   chan struct{} // closed when Wait returned
	err    error         // Wait's result, valid after done
}

// PID returns the process id (also its process group id).
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// Output returns what the process wrote so far to stdout and stderr.
func (p *Proc) Output() string { return p.output.String() }

// Exited reports whether the process has exited, and its Wait error.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop terminates the process group (SIGTERM, SIGKILL after stopGrace) and
// waits for the process. Safe to call more than once.
func (p *Proc) Stop() {
	if ok, _ := p.Exited(); !ok {
		syscall.Kill(-p.PID(), syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			syscall.Kill(-p.PID(), syscall.SIGKILL)
			<-p.done
		}
	}
	// Stragglers of the group (grandchildren that outlived the leader).
	syscall.Kill(-p.PID(), syscall.SIGKILL)
}

// startProcess starts cmd[0] with args cmd[1:] in its own process group,
// with the test's environment plus env ("K=V" entries, later ones win), and
// registers Stop as cleanup. stdin is empty (closed).
func startProcess(t testing.TB, cmd []string, env []string) *Proc {
	t.Helper()
	if len(cmd) == 0 {
		t.Fatal("startProcess: empty command")
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Env = append(os.Environ(), env...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &Proc{Cmd: c, output: &lockedBuffer{}, done: make(chan struct{})}
	c.Stdout, c.Stderr = p.output, p.output
	if err := c.Start(); err != nil {
		t.Fatalf("start %q: %v", cmd, err)
	}
	go func() { p.err = c.Wait(); close(p.done) }()
	t.Cleanup(p.Stop)
	return p
}

// startHTTPServer starts cmd like startProcess and waits until readyURL's
// host:port accepts TCP connections (fail-safe bound readyTimeout). It fails
// the test, with the process output, when the process exits first or never
// listens. readyURL is e.g. "http://127.0.0.1:PORT/mcp".
func startHTTPServer(t testing.TB, cmd []string, env []string, readyURL string) *Proc {
	t.Helper()
	u, err := url.Parse(readyURL)
	if err != nil || u.Host == "" {
		t.Fatalf("startHTTPServer: bad readyURL %q: %v", readyURL, err)
	}
	p := startProcess(t, cmd, env)
	deadline := time.Now().Add(readyTimeout)
	for {
		if ok, werr := p.Exited(); ok {
			t.Fatalf("%q exited before listening on %s: %v\noutput: %s", cmd, u.Host, werr, tail(p.Output(), 4000))
		}
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q: nothing listens on %s after %v\noutput: %s", cmd, u.Host, readyTimeout, tail(p.Output(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitsMostly marks a test that spends its time waiting on real servers and
// clients (process start, simulated work, a node client's round trips), so
// it runs beside the others of its kind (t.Parallel; scripts/test.sh gives
// the package -parallel 6). Such a test asserts no duration, reads no
// process table of the whole machine, sets no environment variable of the
// test process and keeps no fixed port between steps. Tests that measure
// memory, floods, fairness, timeouts or pings stay sequential: they run
// first, alone.
func waitsMostly(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// freePort returns a TCP port on 127.0.0.1 for a server process the test
// starts (testport.Free: outside the ephemeral range, so no connection of
// a test running beside it takes it first).
func freePort(t testing.TB) int {
	t.Helper()
	return testport.Free(t)
}

// writeConfig writes tomlText to config.toml in a fresh temp dir of the test
// and returns its absolute path.
func writeConfig(t testing.TB, tomlText string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(tomlText), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tomlString quotes s as a TOML basic string (for paths in configs).
func tomlString(s string) string {
	b, _ := json.Marshal(s) // JSON string escapes are valid TOML basic-string escapes
	return string(b)
}

// mcpgoInitialize initializes c (already started) as clientInfo.name
// "mcp-go-test-client". protocolVersion "" lets mcp-go negotiate as it does
// by default (it tries the 2026-07-28 server/discover flow first and falls
// back to the initialize handshake); a concrete version pins it.
func mcpgoInitialize(t testing.TB, c *mcpgoclient.Client, protocolVersion string) *mcpgo.InitializeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go-test-client", Version: "0.1.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("mcp-go initialize: %v", err)
	}
	return res
}

// mcpgoClientStdio starts cmd as a stdio MCP server under a mark3labs/mcp-go
// client, initializes it (default negotiation) and closes it at cleanup
// (closing stdin; mcp-go then waits for the process and kills it if needed).
// env are extra "K=V" entries on top of the test's environment.
func mcpgoClientStdio(t testing.TB, cmd []string, env ...string) *mcpgoclient.Client {
	t.Helper()
	c := mcpgoStartStdio(t, cmd, env...)
	mcpgoInitialize(t, c, "")
	return c
}

// mcpgoStartStdio is mcpgoClientStdio without the initialize step: call
// mcpgoInitialize yourself (e.g. to pin a protocol version).
func mcpgoStartStdio(t testing.TB, cmd []string, env ...string) *mcpgoclient.Client {
	t.Helper()
	c, err := mcpgoclient.NewStdioMCPClient(cmd[0], append(os.Environ(), env...), cmd[1:]...)
	if err != nil {
		t.Fatalf("mcp-go stdio %q: %v", cmd, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mcpgoClientHTTP connects a mark3labs/mcp-go Streamable HTTP client to url
// with extra headers (may be nil), initializes it (default negotiation) and
// closes it at cleanup. Against a stateful go-sdk v1.8.0 HTTP server that
// accepts 2026-07-28 the first request after initialize fails; see
// TestMCPGoDefaultAgainstStatefulGoSDKHTTP.
func mcpgoClientHTTP(t testing.TB, url string, headers map[string]string) *mcpgoclient.Client {
	t.Helper()
	c, err := mcpgoclient.NewStreamableHttpClient(url, mcpgotransport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatalf("mcp-go http %s: %v", url, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go http start %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	mcpgoInitialize(t, c, "")
	return c
}

// gosdkClientStdio starts cmd as a stdio MCP server under the official
// go-sdk client (clientInfo.name "gosdk-test-client"), connects
// (initialize done) and closes the session at cleanup.
func gosdkClientStdio(t testing.TB, cmd []string, env ...string) *gosdk.ClientSession {
	t.Helper()
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Env = append(os.Environ(), env...)
	return gosdkConnect(t, &gosdk.CommandTransport{Command: c})
}

// gosdkClientStdioLog is gosdkClientStdio keeping the proxy's stderr (its
// log), for tests that read what it logged.
func gosdkClientStdioLog(t testing.TB, cmd []string) (*gosdk.ClientSession, *lockedBuffer) {
	t.Helper()
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Env = os.Environ()
	stderr := &lockedBuffer{}
	c.Stderr = stderr
	return gosdkConnect(t, &gosdk.CommandTransport{Command: c}), stderr
}

// gosdkClientHTTP connects the official go-sdk client over Streamable HTTP
// to url; headers (may be nil) are added to every request.
func gosdkClientHTTP(t testing.TB, url string, headers map[string]string) *gosdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerRoundTripper{headers}}
	return gosdkConnect(t, &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc})
}

type headerRoundTripper struct{ h map[string]string }

func (h headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func gosdkConnect(t testing.TB, tr gosdk.Transport) *gosdk.ClientSession {
	t.Helper()
	return gosdkConnectWith(t, tr, nil)
}

// gosdkConnectWith is gosdkConnect with the session's options (e.g. the
// protocol version the client offers); nil is the go-sdk's defaults.
func gosdkConnectWith(t testing.TB, tr gosdk.Transport, opts *gosdk.ClientSessionOptions) *gosdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "gosdk-test-client", Version: "0.1.0"}, nil)
	cs, err := c.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// lines splits text into non-empty lines (for logs and JSON Lines files).
func lines(text string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// jpath walks a decoded JSON value (maps, slices) along path elements:
// string keys for objects, int indexes for arrays. It fails the test,
// naming the first element that does not resolve.
func jpath(t testing.TB, v any, path ...any) any {
	t.Helper()
	cur := v
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("jpath %v: element %d (%q): not an object: %s", path, i, k, tail(fmt.Sprint(cur), 300))
			}
			if cur, ok = m[k]; !ok {
				t.Fatalf("jpath %v: element %d: no key %q in %s", path, i, k, tail(fmt.Sprint(m), 300))
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k < 0 || k >= len(a) {
				t.Fatalf("jpath %v: element %d: no index %d in %s", path, i, k, tail(fmt.Sprint(cur), 300))
			}
			cur = a[k]
		default:
			t.Fatalf("jpath: path element %d has type %T, want string or int", i, p)
		}
	}
	return cur
}

// runCLI runs the proxy binary with args (a one-shot command: check, list,
// describe…) and returns what it printed, stdout and stderr together,
// whatever its exit status; bounded by nodeClientTimeout.
func runCLI(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeClientTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, buildProxy(t), args...).CombinedOutput()
	return string(out)
}
