package modes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/sandbox"
)

// TestMain routes the sandbox worker role to sandbox.WorkerMain, so the
// test binary itself is the code mode's worker (as the real binary is).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-worker" {
		os.Exit(sandbox.WorkerMain())
	}
	os.Exit(m.Run())
}

// testEnv is a modes.Env over a real catalog built from the repo's
// examples/catalogs files. Its Call stands in for the proxy's call path and
// an upstream: it answers like examples/catalogserver (the echo
// {"tool","arguments"} as text and structuredContent), except for the
// tools named in special. It records what it was asked.
type testEnv struct {
	cat     *catalog.Catalog
	deny    map[string]bool // ids the session's policy denies
	special map[string]func(args json.RawMessage) (*mcp.CallToolResult, error)

	mu        sync.Mutex
	calls     []string // ids called, in order
	gotArgs   []string // the arguments each call received
	searched  []string
	described []string
}

func (e *testEnv) Snapshot() *catalog.Snapshot    { return e.cat.Snapshot() }
func (e *testEnv) Allowed(en *catalog.Entry) bool { return !e.deny[en.ID] }
func (e *testEnv) Call(ctx context.Context, en *catalog.Entry, args json.RawMessage, via string) (*mcp.CallToolResult, error) {
	e.mu.Lock()
	e.calls = append(e.calls, en.ID)
	e.gotArgs = append(e.gotArgs, string(args))
	e.mu.Unlock()
	if f := e.special[en.ID]; f != nil {
		return f(args)
	}
	var a any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	obj := map[string]any{"tool": en.Name, "arguments": a}
	b, _ := json.Marshal(obj)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: obj}, nil
}
func (e *testEnv) Searched(q string, _ int, via string) {
	e.mu.Lock()
	e.searched = append(e.searched, via+":"+q)
	e.mu.Unlock()
}
func (e *testEnv) Described(id string, _ bool, via string) {
	e.mu.Lock()
	e.described = append(e.described, via+":"+id)
	e.mu.Unlock()
}

// catalogRecord is one line of examples/catalogs/*.jsonl.
type catalogRecord struct {
	Server       string          `json:"server"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// readCatalog reads examples/catalogs/<file> and groups its tools by the
// record's server field (or into upstream, when not "").
func readCatalog(t testing.TB, file, upstream string) map[string][]*catalog.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "examples", "catalogs", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]*catalog.Entry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var r catalogRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		up := r.Server
		if upstream != "" {
			up = upstream
		}
		out[up] = append(out[up], &catalog.Entry{Name: r.Name, Description: r.Description, InputSchema: r.InputSchema, OutputSchema: r.OutputSchema})
	}
	return out
}

// newTestEnv builds a catalog like the default config.toml's: github
// (trusted) and gitlab from github-like.jsonl, the 1,000-tool registry
// (untrusted), and a "memory" upstream whose read_graph is direct-only.
func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{
		{Name: "github", Prefix: "github", Trusted: true},
		{Name: "gitlab", Prefix: "gitlab"},
		{Name: "registry", Prefix: "registry"},
		{Name: "memory", Prefix: "memory", DirectOnly: []string{"read_graph"}},
	})
	gh := readCatalog(t, "github-like.jsonl", "")
	cat.SetTools("github", gh["github"])
	cat.SetTools("gitlab", gh["gitlab"])
	cat.SetTools("registry", readCatalog(t, "toolsdk-1000.jsonl", "registry")["registry"])
	cat.SetTools("memory", []*catalog.Entry{
		{Name: "read_graph", Description: "Read the entire knowledge graph", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: "create_entities", Description: "Create entities in the knowledge graph", InputSchema: json.RawMessage(`{"type":"object","properties":{"entities":{"type":"array"}}}`)},
	})
	return &testEnv{cat: cat, deny: map[string]bool{}}
}

// newTestEnvWithout is newTestEnv without upstream's tool name: the
// deployment a denied tool's answers must be identical to (SPEC §6).
func newTestEnvWithout(t testing.TB, upstream, name string) *testEnv {
	t.Helper()
	env := newTestEnv(t)
	var keep []*catalog.Entry
	for _, e := range env.cat.Snapshot().Entries {
		if e.Upstream == upstream && e.Name != name {
			c := *e
			keep = append(keep, &c)
		}
	}
	env.cat.SetTools(upstream, keep)
	return env
}

func testAPI() API {
	return API{Limits: Limits{Default: 8, Max: 20}, Bounds: catalog.DefaultBounds()}
}

// newTestPool starts a sandbox pool whose workers are this test binary.
func newTestPool(t testing.TB, size int) *sandbox.Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := sandbox.NewPool(sandbox.Options{Exe: exe, PoolSize: size, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

func newTestCode(t testing.TB, poolSize int) *Code {
	return &Code{API: testAPI(), Pool: newTestPool(t, poolSize), Timeout: 10 * time.Second}
}

// resultText is the first text block of r.
func resultText(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	if r == nil || len(r.Content) == 0 {
		t.Fatalf("empty result %v", r)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first block is %T, want text", r.Content[0])
	}
	return tc.Text
}

// structured decodes r's structuredContent into v.
func structured(t testing.TB, r *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

func args(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
