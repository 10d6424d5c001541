//go:build unix

package integration

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// The version bridge never takes a feature away: a client of each
// protocol generation calls tools of go-sdk v1.8.0 servers configured as
// stdio upstreams (shared and per-client sessions) whose tools ask the
// client themselves (sampling/createMessage, elicitation/create, also with
// defaults and enums) or log during the call, and gets what it gets
// connected to the same server directly.

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// featureClient is a go-sdk client that answers every question a server
// can ask: sampling with "sampled: " and the last message's text,
// elicitation by filling each property of the requested schema from its
// default, else its first enum value or const, roots with one root; it
// records the log messages it receives.
type featureClient struct {
	mu   sync.Mutex
	logs []string
}

func (fc *featureClient) client(name string) *gosdk.Client {
	return gosdk.NewClient(&gosdk.Implementation{Name: name, Version: "1"}, fc.options())
}

// options are the client's handlers.
func (fc *featureClient) options() *gosdk.ClientOptions {
	return &gosdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *gosdk.CreateMessageRequest) (*gosdk.CreateMessageResult, error) {
			text := ""
			if n := len(r.Params.Messages); n > 0 {
				if tc, ok := r.Params.Messages[n-1].Content.(*gosdk.TextContent); ok {
					text = tc.Text
				}
			}
			return &gosdk.CreateMessageResult{Content: &gosdk.TextContent{Text: "sampled: " + text}, Model: "test-model", Role: "assistant"}, nil
		},
		ElicitationHandler: func(_ context.Context, r *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			if r.Params.URL != "" {
				return &gosdk.ElicitResult{Action: "accept"}, nil
			}
			return &gosdk.ElicitResult{Action: "accept", Content: fillSchema(r.Params.RequestedSchema)}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *gosdk.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			fc.mu.Lock()
			fc.logs = append(fc.logs, string(r.Params.Level)+" "+string(b))
			fc.mu.Unlock()
		},
	}
}

// takeLogs returns the log messages received so far, sorted, and forgets them.
func (fc *featureClient) takeLogs() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	out := fc.logs
	fc.logs = nil
	sort.Strings(out)
	return out
}

// fillSchema answers an elicitation's requestedSchema: each property's
// default, else its first enum value, first oneOf/anyOf const, an array of
// the first item choice, else a type-appropriate value.
func fillSchema(schema any) map[string]any {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	b, _ := json.Marshal(schema)
	_ = json.Unmarshal(b, &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		out[name] = fillValue(p)
	}
	return out
}

func fillValue(p map[string]any) any {
	if d, ok := p["default"]; ok {
		return d
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := p[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return m["const"]
			}
		}
	}
	switch p["type"] {
	case "array":
		items, _ := p["items"].(map[string]any)
		return []any{fillValue(items)}
	case "integer":
		return 7
	case "number":
		return 7.5
	case "boolean":
		return true
	}
	return "filled"
}

// callOutcome is what a client sees of one tools/call: the error or the
// result's isError and text, and the log messages that arrived by the
// time the call returned (after a short settle).
func callOutcome(ctx context.Context, fc *featureClient, cs *gosdk.ClientSession, name string, args map[string]any) string {
	return callOutcomeParams(ctx, fc, cs, &gosdk.CallToolParams{Name: name, Arguments: args})
}

// callOutcomeParams is callOutcome of a call with params p.
func callOutcomeParams(ctx context.Context, fc *featureClient, cs *gosdk.ClientSession, p *gosdk.CallToolParams) string {
	fc.takeLogs()
	res, err := cs.CallTool(ctx, p)
	time.Sleep(300 * time.Millisecond) // notifications sent just before the result are handled after it
	logs := fc.takeLogs()
	if err != nil {
		return "error: " + normalizeError(err.Error())
	}
	var text []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *gosdk.TextContent:
			text = append(text, c.Text)
		default:
			b, _ := json.Marshal(c)
			text = append(text, string(b))
		}
	}
	out := fmt.Sprintf("isError=%v %s", res.IsError, strings.Join(text, " | "))
	if len(logs) > 0 {
		out += fmt.Sprintf(" logs=%d%v", len(logs), logs)
	}
	return out
}

// normalizeError drops what differs between a direct connection and the
// proxy in an error text only by the tool's exposed name.
func normalizeError(s string) string { return s }

// connectAt connects c over tr offering version.
func connectAt(t testing.TB, c *gosdk.Client, tr gosdk.Transport, version string) *gosdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &gosdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestVersionBridgeStdioUpstreams: go-sdk v1.8.0's everything example and
// its conformance everything-server as stdio upstreams, on a shared and on
// a per-client upstream session; a go-sdk client at 2025-06-18, 2025-11-25
// and 2026-07-28 over the proxy's Streamable HTTP front calls the tools that
// sample, elicit (plain, with defaults, with enums) and log, and gets the
// outcome it gets from the server directly over stdio — or, where the
// server refuses a 2026-07-28 client, more (the proxy's leg is of the
// initialize era: an asserted difference).
func TestVersionBridgeStdioUpstreams(t *testing.T) {
	waitsMostly(t)
	ev := gosdkEverything(t)
	conf := goBinary(t, "gosdk-conformance", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	servers := []struct {
		name, bin string
		calls     []struct {
			tool string
			args map[string]any
		}
	}{
		{"everything", ev, []struct {
			tool string
			args map[string]any
		}{{"sample", nil}, {"elicit (form)", nil}, {"log", nil}}},
		{"conformance", conf, []struct {
			tool string
			args map[string]any
		}{
			{"test_sampling", map[string]any{"prompt": "hello"}},
			{"test_elicitation", map[string]any{"message": "who?"}},
			{"test_elicitation_sep1034_defaults", nil},
			{"test_elicitation_sep1330_enums", nil},
			{"test_tool_with_logging", nil},
		}},
	}
	var cfg strings.Builder
	cfg.WriteString("[tool_search]\nenabled = false\n")
	for _, s := range servers {
		for _, mode := range []string{"shared", "per-client"} {
			fmt.Fprintf(&cfg, "[upstreams.%s-%s]\ncommand = %s\nsession = %q\n", s.name, mode, tomlString(s.bin), mode)
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, writeConfig(t, cfg.String()), "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")

	exposed := func(up, tool string) string { // the proxy's name for tool (direct mode)
		r := strings.NewReplacer(" ", "_", "(", "", ")", "")
		return up + "__" + r.Replace(tool)
	}
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { // one after the other: a shared upstream's log messages outside a call go to every client
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			pfc := &featureClient{}
			pcs := connectAt(t, pfc.client("bridge-client"), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, version)
			// With a per-client upstream configured the proxy's Streamable
			// HTTP front offers up to 2025-11-25 (docs/config.md), so a
			// 2026-07-28 client talks to it at 2025-11-25 here;
			// TestCompatMatrix has 2026-07-28 clients through the proxy.
			t.Logf("%s client: the proxy answered at %s", version, pcs.InitializeResult().ProtocolVersion)
			if version < "2026-07-28" {
				if err := pcs.SetLoggingLevel(ctx, &gosdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range servers {
				dfc := &featureClient{}
				dcs := connectAt(t, dfc.client("bridge-client"), &gosdk.CommandTransport{Command: exec.Command(s.bin)}, version)
				if version < "2026-07-28" {
					if err := dcs.SetLoggingLevel(ctx, &gosdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
						t.Fatal(err)
					}
				}
				for _, c := range s.calls {
					direct := callOutcome(ctx, dfc, dcs, c.tool, c.args)
					for _, mode := range []string{"shared", "per-client"} {
						through := callOutcome(ctx, pfc, pcs, exposed(s.name+"-"+mode, c.tool), c.args)
						switch {
						case through == direct:
							t.Logf("%s %s (%s): %s", s.name, c.tool, mode, through)
						case version >= "2026-07-28" && strings.Contains(direct, "return an InputRequests map instead") && !strings.Contains(through, "cannot be sent while serving"):
							// Directly the server refuses to ask a 2026-07-28
							// client itself; through the proxy's 2025-11-25 leg
							// the question reaches it as an input_required result
							// (test_elicitation_sep1330_enums: the go-sdk client
							// then refuses the schema itself, as it does when
							// connected at 2025-11-25).
							t.Logf("%s %s (%s): direct %q; through the proxy more: %s", s.name, c.tool, mode, direct, through)
						default:
							t.Errorf("%s %s (%s):\n  direct:  %s\n  through: %s", s.name, c.tool, mode, direct, through)
						}
					}
				}
			}
		})
	}
}
