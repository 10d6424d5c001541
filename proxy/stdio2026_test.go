package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// legacyVersion is the newest protocol version with initialize and
// sessions; tests of session behaviour (a request to the client, its
// timeout, initialize-time limits) pin their go-sdk clients to it, since
// the go-sdk client offers 2026-07-28 first.
const legacyVersion = "2025-11-25"

// TestStdioFront2026: the stdio front serves protocol 2026-07-28.
// A go-sdk client at its default version negotiates 2026-07-28 over
// the stdio server (by server/discover, no initialize), lists and calls
// tools, and the proxy's approval question reaches it as an input_required
// result, which the client's go-sdk answers through its elicitation
// handler: approve false blocks the call, true runs it. A client pinned to
// 2025-11-25 on the same server still gets 2025-11-25 and is asked by
// elicitation/create.
func TestStdioFront2026(t *testing.T) {
	p, up := testProxy(t, approvalConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		version, want string
		approve       bool
	}{{"", modernVersion, false}, {"", modernVersion, true}, {legacyVersion, legacyVersion, true}} {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		var asked []string
		c := mcp.NewClient(&mcp.Implementation{Name: "stdio-" + tc.want, Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, r.Params.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": tc.approve}}, nil
			},
		})
		cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		name := tc.want + " approve=" + map[bool]string{true: "true", false: "false"}[tc.approve]
		if v := cs.InitializeResult().ProtocolVersion; v != tc.want {
			t.Errorf("%s: negotiated %q", name, v)
		}
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", name, err)
		}
		var names []string
		for _, tool := range lt.Tools {
			names = append(names, tool.Name)
		}
		if !strings.Contains(strings.Join(names, " "), "up__delete_thing") {
			t.Errorf("%s: tools/list = %v", name, names)
		}
		before := up.count("delete_thing")
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__delete_thing", Arguments: map[string]any{"name": "x"}})
		cs.Close()
		if err != nil {
			t.Fatalf("%s: tools/call: %v", name, err)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "Approve this tool call?") {
			t.Errorf("%s: questions %q, want the approval question", name, asked)
		}
		ran := up.count("delete_thing") == before+1
		if ran != tc.approve || r.IsError == tc.approve {
			t.Errorf("%s: upstream ran=%v isError=%v: %s", name, ran, r.IsError, resultText(r))
		}
	}
}

// TestStdioDiscoverThenInitialize: a stdio client that sends
// server/discover and then, not having waited for its answer, initialize
// (mark3labs/mcp-go falls back after 5 s; `serve` reads stdin only after
// server.startup_wait) gets both answered: the discover result at
// 2026-07-28 (supported versions, the proxy's instructions and
// capabilities, resultType "complete", a ttlMs), then a 2025-11-25 session
// that serves tools/list. The go-sdk's own discover handler made the
// initialize fail with "duplicate initialize received" (stdio2026.go).
func TestStdioDiscoverThenInitialize(t *testing.T) {
	p, _ := testProxy(t, approvalConfig)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(id int64, method string, params any) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(params)
		if err := conn.Write(ctx, &jsonrpc.Request{ID: mustID(t, id), Method: method, Params: raw}); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			r, ok := m.(*jsonrpc.Response)
			if !ok || r.ID.Raw() != id {
				continue
			}
			if r.Error != nil {
				t.Fatalf("%s: %v", method, r.Error)
			}
			var out map[string]any
			if err := json.Unmarshal(r.Result, &out); err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	meta := map[string]any{mcp.MetaKeyProtocolVersion: modernVersion, mcp.MetaKeyClientInfo: map[string]any{"name": "slow-prober", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}}
	d := call(1, "server/discover", map[string]any{"_meta": meta})
	if vs, _ := json.Marshal(d["supportedVersions"]); !strings.Contains(string(vs), modernVersion) || !strings.Contains(string(vs), legacyVersion) {
		t.Errorf("discover supportedVersions = %s", vs)
	}
	if d["resultType"] != "complete" || d["instructions"] == "" || d["capabilities"] == nil {
		t.Errorf("discover result = %v, want resultType complete, instructions and capabilities", d)
	}
	if _, ok := d["ttlMs"]; !ok {
		t.Errorf("discover result has no ttlMs: %v", d)
	}
	ir := call(2, "initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "slow-prober", "version": "1"}})
	if ir["protocolVersion"] != legacyVersion {
		t.Fatalf("initialize after discover = %v", ir)
	}
	raw, _ := json.Marshal(map[string]any{})
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: raw}); err != nil {
		t.Fatal(err)
	}
	lt := call(3, "tools/list", map[string]any{})
	if b, _ := json.Marshal(lt["tools"]); !strings.Contains(string(b), "up__delete_thing") {
		t.Errorf("tools/list on the 2025-11-25 session: %s", b)
	}
	if _, ok := lt["resultType"]; ok {
		t.Errorf("a 2025-11-25 tools/list result has resultType: %v", lt["resultType"])
	}
}

// TestPerClientStdio2026: with an upstream of session = "per-client", the
// stdio front still serves 2026-07-28: the client's connection is its
// session, its per-client upstream session opens at its first request
// (with the capabilities of the request's _meta), and the questions that
// upstream (on 2025-11-25) asks during a call reach the client as
// input-required results, which the go-sdk client answers through its
// handlers. Streamable HTTP keeps offering up to 2025-11-25 (a 2026-07-28
// HTTP request has no session to open an upstream session for).
func TestPerClientStdio2026(t *testing.T) {
	p, _ := testProxy(t, "[server]\ntransport = \"http\"\n[upstreams.t]\nurl = %[1]s\n[upstreams.a]\nurl = "+tomlQuote(askingUpstream(t))+"\nsession = \"per-client\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ct, st := mcp.NewInMemoryTransports()
	if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-per-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"word": "plum"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi from the model"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///stdio", Name: "stdio"})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
		t.Fatalf("stdio with a per-client upstream negotiated %q, want %q", v, modernVersion)
	}
	for tool, want := range map[string]string{"a__ask": "accept: you said plum", "a__sample": "model: hi from the model", "a__roots": "root file:///stdio"} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("%s: %v", tool, err)
			continue
		}
		if got := resultText(r); got != want {
			t.Errorf("%s = %q, want %q", tool, got, want)
		}
	}
	if got := p.Server("", "streamable-http"); slices.Contains(p.serverVersions("streamable-http"), modernVersion) || got == nil {
		t.Errorf("Streamable HTTP with a per-client upstream offers %v; want up to 2025-11-25", p.serverVersions("streamable-http"))
	}
}
