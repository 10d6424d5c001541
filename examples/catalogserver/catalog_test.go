package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const sample = `{"id":"a::x","server":"a","name":"x","description":"first x","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}
{"id":"b::x","server":"b","name":"x","description":"second x","inputSchema":{"type":"string"}}

{"id":"b::x_2","server":"b","name":"x_2","description":"a real x_2"}
{"id":"c::x","server":"c","name":"x","inputSchema":null}
{"id":"c::bad name","server":"c","name":"bad name/é","inputSchema":[1,2]}
{"id":"c::ro","server":"c","name":"ro","annotations":{"readOnlyHint":true},"inputSchema":{"type":["object","null"]}}
`

func names(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Tool.Name)
	}
	return out
}

func TestLoadToolsNamesAndSchemas(t *testing.T) {
	tools, err := LoadTools(strings.NewReader(sample), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The first x keeps its name; the real "x_2" keeps its name, so the
	// duplicates take _3 and _4; "bad name/é" is sanitized rune by rune.
	want := []string{"x", "x_3", "x_2", "x_4", "bad_name__", "ro"}
	if got := names(tools); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want %v", got, want)
	}
	wantSchema := []string{
		`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`,
		`{"type":"object"}`, `{"type":"object"}`, `{"type":"object"}`, `{"type":"object"}`, `{"type":"object"}`,
	}
	for i, tl := range tools {
		if got := string(tl.Tool.InputSchema.(json.RawMessage)); got != wantSchema[i] {
			t.Errorf("tool %d (%s) schema = %s, want %s", i, tl.Tool.Name, got, wantSchema[i])
		}
	}
	if tools[2].Source != 4 || tools[2].ID != "b::x_2" || tools[2].Server != "b" {
		t.Errorf("tools[2] = line %d id %q server %q, want line 4 id b::x_2 server b", tools[2].Source, tools[2].ID, tools[2].Server)
	}
	if a := tools[5].Tool.Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("annotations of ro not kept: %+v", a)
	}
}

func TestLoadToolsFilterLimitKeepNames(t *testing.T) {
	tools, err := LoadTools(strings.NewReader(sample), LoadOptions{Server: "c", Limit: 2, KeepNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(tools), ","); got != "x,bad name/é" {
		t.Fatalf("names = %q, want x,bad name/é", got)
	}
	tools, err = LoadTools(strings.NewReader(sample), LoadOptions{Server: "nope"})
	if err != nil || len(tools) != 0 {
		t.Fatalf("unknown server: %d tools, err %v; want 0, nil", len(tools), err)
	}
}

func TestLoadToolsErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"name\":\"a\"}\n{not json}\n", "line 2:"},
		{"\n\n{\"server\":\"s\"}\n", `line 3: missing or empty "name"`},
		{"{\"name\":\"a\"}\n[1]\n", "line 2:"},
	} {
		_, err := LoadTools(strings.NewReader(tc.in), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadTools(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestLongDuplicateNamesStayWithinLimit(t *testing.T) {
	long := strings.Repeat("n", 200)
	in := `{"name":"` + long + `"}` + "\n" + `{"name":"` + long + `"}` + "\n"
	tools, err := LoadTools(strings.NewReader(in), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := tools[0].Tool.Name, tools[1].Tool.Name
	if len(a) != 128 || len(b) != 128 || a == b || !strings.HasSuffix(b, "_2") {
		t.Fatalf("names %q (%d), %q (%d): want two distinct 128-byte names, the second ending _2", a, len(a), b, len(b))
	}
}

var sdkName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func TestShippedCatalogsLoad(t *testing.T) {
	for file, n := range map[string]int{"../catalogs/toolsdk-1000.jsonl": 1000, "../catalogs/github-like.jsonl": 12} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := LoadTools(f, LoadOptions{})
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(tools) != n {
			t.Errorf("%s: %d tools, want %d", file, len(tools), n)
		}
		seen := map[string]bool{}
		for _, tl := range tools {
			if !sdkName.MatchString(tl.Tool.Name) || seen[tl.Tool.Name] {
				t.Errorf("%s line %d: name %q invalid or duplicate", file, tl.Source, tl.Tool.Name)
			}
			seen[tl.Tool.Name] = true
		}
	}
}

// connect serves tools in memory and returns a go-sdk client session.
func connect(t *testing.T, tools []Tool, pageSize int) *mcp.ClientSession {
	t.Helper()
	return connectOpts(t, tools, Options{PageSize: pageSize})
}

// connectOpts is connect with every server option.
func connectOpts(t *testing.T, tools []Tool, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	srv := NewServer("catalogserver-test", tools, opts)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func TestServerListsEveryToolAcrossPages(t *testing.T) {
	f, err := os.Open("../catalogs/github-like.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tools, err := LoadTools(f, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, tools, 5)
	if got := cs.InitializeResult().ServerInfo.Name; got != "catalogserver-test" {
		t.Errorf("serverInfo.name = %q", got)
	}
	ctx := context.Background()
	pages := 0
	listed := map[string]*mcp.Tool{}
	var cursor string
	for {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tl := range res.Tools {
			listed[tl.Name] = tl
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages != 3 || len(listed) != 12 {
		t.Fatalf("%d pages, %d tools; want 3 pages of at most 5, 12 tools", pages, len(listed))
	}
	for _, want := range tools {
		got, ok := listed[want.Tool.Name]
		if !ok {
			t.Errorf("tool %q not listed", want.Tool.Name)
			continue
		}
		gotSchema, _ := json.Marshal(got.InputSchema)
		var a, b any
		json.Unmarshal(gotSchema, &a)
		json.Unmarshal(want.Tool.InputSchema.(json.RawMessage), &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: listed schema %s, want %s", want.Tool.Name, ja, jb)
		}
		if got.Description != want.Tool.Description {
			t.Errorf("%s: description %q, want %q", want.Tool.Name, got.Description, want.Tool.Description)
		}
	}
	if a := listed["delete_file"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete_file annotations = %+v, want destructiveHint true", a)
	}
}

func TestServerEchoesWithoutValidation(t *testing.T) {
	tools, err := LoadTools(strings.NewReader(sample), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, tools, 0)
	ctx := context.Background()
	// "x" requires a string "q": send a number and an extra key instead; the
	// server must not validate, and must keep 1.50 and key order sorted.
	raw := json.RawMessage(`{"zeta":{"b":1,"a":[true,null]},"q":1.50}`)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x", Arguments: raw})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result = %+v, want one content block, not an error", res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	want := `{"arguments":{"q":1.50,"zeta":{"a":[true,null],"b":1}},"tool":"x"}`
	if text != want {
		t.Errorf("text = %s\nwant   %s", text, want)
	}
	// The client decodes structuredContent into float64s, so compare it
	// after the same decoding of the expected text.
	var wantObj any
	json.Unmarshal([]byte(want), &wantObj)
	sc, _ := json.Marshal(res.StructuredContent)
	if wb, _ := json.Marshal(wantObj); string(sc) != string(wb) {
		t.Errorf("structuredContent = %s, want %s", sc, want)
	}
	// A renamed duplicate echoes its served name; no arguments echo as {}.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "x_4"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `{"arguments":{},"tool":"x_4"}` {
		t.Errorf("x_4 text = %s", got)
	}
	// Unknown tools are a protocol error from the SDK, not an echo.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("call of an unknown tool succeeded")
	}
}

func TestEchoResultRejectsInvalidJSON(t *testing.T) {
	if _, err := EchoResult("t", json.RawMessage(`{"a":`)); err == nil || !strings.Contains(err.Error(), `"t"`) {
		t.Errorf("EchoResult(invalid) error = %v, want one naming the tool", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-tools", "/nonexistent/tools.jsonl"},
		{"-tools", "../catalogs/github-like.jsonl", "-server", "no-such-server"},
		{"-tools", "../catalogs/github-like.jsonl", "extra"},
		{"-tools", "../catalogs/github-like.jsonl", "-protocol-versions", "2025-11-25,1999-01-01"},
	} {
		var stderr strings.Builder
		if code := run(args, &stderr); code != 2 || !strings.Contains(stderr.String(), "catalogserver") {
			t.Errorf("run(%q) = %d, stderr %q; want 2 and a message", args, code, stderr.String())
		}
	}
}

// With Demo (-demo, the default config.toml's catalogs) every result says
// in a second text block that the tool is a stub and nothing was done; the
// echo itself (content[0], structuredContent) is unchanged.
func TestDemoResultSaysStub(t *testing.T) {
	tools, err := LoadTools(strings.NewReader(sample), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectOpts(t, tools, Options{Demo: true})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "x", Arguments: map[string]any{"q": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result = %+v, want the echo and the demo note", res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `{"arguments":{"q":"a"},"tool":"x"}` {
		t.Errorf("echo = %s", got)
	}
	if got := res.Content[1].(*mcp.TextContent).Text; got != DemoNote || !strings.Contains(got, "nothing was done") {
		t.Errorf("second block = %q, want DemoNote", got)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"arguments":{"q":"a"},"tool":"x"}` {
		t.Errorf("structuredContent = %s", sc)
	}
}
