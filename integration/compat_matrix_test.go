//go:build unix

package integration

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// TestCompatMatrix: never less than a direct connection. Every cell is
// client generation (2025-06-18, 2025-11-25, 2026-07-28; the go-sdk v1.8.0
// client) × upstream transport (stdio, Streamable HTTP with sessions,
// stateless Streamable HTTP) × upstream implementation (go-sdk v1.8.0, the
// TypeScript SDK's server-everything, mark3labs/mcp-go v1.2.1) × feature
// (sampling, elicitation with defaults, elicitation with enums, logging
// during a call, progress, cancellation, resource subscriptions). The same
// client does the same thing once connected to the server directly and
// once through the proxy (Streamable HTTP front, direct mode); a cell
// passes when both outcomes are equal. A cell that cannot be compared says
// why (no server of that implementation serves that transport, or has no
// tool for that feature); a cell whose outcome differs for a known reason
// asserts that difference (the proxy gives more, never less).
//
// The servers: go-sdk's conformance everything-server (stdio, -http with
// sessions, -http stateless), server-everything (stdio, streamableHttp;
// it has no stateless mode), and mcp-go's examples: everything over
// stdio (progress, cancellation, resources), sampling_server and
// elicitation over stdio, conformance over Streamable HTTP with sessions
// (mcp-go's examples serve no stateless HTTP). Servers are started once;
// cells run in parallel by server, one client generation after the other
// (calls of two clients at once on a shared stdio session cannot be told
// apart, TestConcurrentClientsRouting).
//
//	go test ./integration -run TestCompatMatrix -v   # prints the table

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var mxGenerations = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

var mxFeatures = []string{"sampling", "elicit-defaults", "elicit-enums", "logging", "progress", "cancel", "subscribe"}

// mxServer is one upstream server of the matrix.
type mxServer struct {
	impl, transport string
	up              string   // its upstream name in the proxy's config
	cmd             []string // stdio: the command
	url             string   // HTTP: its URL
	// tools: feature -> the tool that exercises it and its arguments;
	// skip: feature -> why the cell cannot be compared.
	tools map[string]mxTool
	skip  map[string]string
	// subscribe: the resource URI to subscribe to ("" none); toggle: a
	// tool to call first that turns updates on (server-everything).
	subscribe, toggle string
	toggled           atomic.Bool // toggle called through the proxy
}

type mxTool struct {
	name string
	args map[string]any
}

// mxCell is one cell's outcome.
type mxCell struct {
	direct, through string
	verdict         string // "=" equal, "+" the proxy gives more (asserted), "n/a: why"
}

func TestCompatMatrix(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	began := time.Now()
	conf := goBinary(t, "gosdk-conformance", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	mgEverything := mcpgoEverything(t)
	mgSampling := goBinary(t, "mcpgo-sampling", "github.com/mark3labs/mcp-go/examples/sampling_server")
	mgElicit := goBinary(t, "mcpgo-elicitation", "github.com/mark3labs/mcp-go/examples/elicitation")
	mgConf := goBinary(t, "mcpgo-conformance", "github.com/mark3labs/mcp-go/examples/conformance")
	ts := npmServer(t, "everything")

	goHTTP, goStateless := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, []string{conf, "-http", goHTTP, "-stateless=false"}, nil, "http://"+goHTTP)
	startHTTPServer(t, []string{conf, "-http", goStateless}, nil, "http://"+goStateless)
	tsPort := freePort(t)
	startHTTPServer(t, append(append([]string{}, ts...), "streamableHttp"), []string{fmt.Sprintf("PORT=%d", tsPort)}, fmt.Sprintf("http://127.0.0.1:%d/mcp", tsPort))
	mgAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, []string{mgConf}, []string{"CONFORMANCE_ADDR=" + mgAddr}, "http://"+mgAddr+"/mcp")

	goTools := map[string]mxTool{
		"sampling":        {"test_sampling", map[string]any{"prompt": "capital of France?"}},
		"elicit-defaults": {"test_elicitation_sep1034_defaults", nil},
		"elicit-enums":    {"test_elicitation_sep1330_enums", nil},
		"logging":         {"test_tool_with_logging", nil},
		"progress":        {"test_tool_with_progress", nil},
	}
	goSkip := map[string]string{"cancel": "go-sdk's conformance server has no tool that runs long enough to be cancelled"}
	mgConfTools := map[string]mxTool{
		"sampling":        {"test_sampling", map[string]any{"prompt": "capital of France?"}},
		"elicit-defaults": {"test_elicitation_sep1034_defaults", nil},
		"elicit-enums":    {"test_elicitation_sep1330_enums", nil},
		"logging":         {"test_tool_with_logging", nil},
		"progress":        {"test_tool_with_progress", nil},
	}
	tsTools := map[string]mxTool{
		"sampling":        {"trigger-sampling-request", map[string]any{"prompt": "capital of France?"}},
		"elicit-defaults": {"trigger-elicitation-request", nil},
		"elicit-enums":    {"trigger-elicitation-request", nil}, // one form with defaults and enums
		"progress":        {"trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3}},
		"cancel":          {"trigger-long-running-operation", map[string]any{"duration": 3, "steps": 3}},
	}
	tsSkip := map[string]string{"logging": "server-everything sends no log message during a call (its logging is periodic, toggle-simulated-logging)"}
	servers := []*mxServer{
		{impl: "go-sdk", transport: "stdio", up: "gostdio", cmd: []string{conf}, tools: goTools, skip: goSkip, subscribe: "test://watched-resource"},
		{impl: "go-sdk", transport: "http", up: "gohttp", url: "http://" + goHTTP, tools: goTools, skip: goSkip, subscribe: "test://watched-resource"},
		{impl: "go-sdk", transport: "stateless", up: "gostateless", url: "http://" + goStateless, tools: goTools, skip: goSkip, subscribe: "test://watched-resource"},
		{impl: "ts", transport: "stdio", up: "tsstdio", cmd: ts, tools: tsTools, skip: tsSkip, subscribe: "demo://resource/static/document/architecture.md", toggle: "toggle-subscriber-updates"},
		{impl: "ts", transport: "http", up: "tshttp", url: fmt.Sprintf("http://127.0.0.1:%d/mcp", tsPort), tools: tsTools, skip: tsSkip, subscribe: "demo://resource/static/document/architecture.md", toggle: "toggle-subscriber-updates"},
		{impl: "ts", transport: "stateless", skip: allSkipped("server-everything has no stateless Streamable HTTP mode")},
		{impl: "mcp-go", transport: "stdio", up: "mgstdio", cmd: []string{mgEverything, "-t", "stdio"},
			tools: map[string]mxTool{
				"progress": {"longRunningOperation", map[string]any{"duration": 1, "steps": 3}},
				"cancel":   {"longRunningOperation", map[string]any{"duration": 3, "steps": 3}}, // it does not stop when cancelled: short
			},
			skip: map[string]string{"logging": "no mcp-go example server sends a log message during a call over stdio"},
			// sampling and elicitation: mcp-go's sampling_server and
			// elicitation examples (below), each its own stdio server.
			subscribe: "test://static/resource"},
		{impl: "mcp-go", transport: "http", up: "mghttp", url: "http://" + mgAddr + "/mcp", tools: mgConfTools,
			skip: map[string]string{"cancel": "mcp-go's conformance server has no tool that runs long enough to be cancelled"}, subscribe: "test://static-text"},
		{impl: "mcp-go", transport: "stateless", skip: allSkipped("no mcp-go example server serves stateless Streamable HTTP")},
	}
	extra := []*mxServer{ // the mcp-go stdio cells for sampling and elicitation
		{impl: "mcp-go", transport: "stdio", up: "mgsampling", cmd: []string{mgSampling}, tools: map[string]mxTool{"sampling": {"ask_llm", map[string]any{"question": "capital of France?"}}}},
		{impl: "mcp-go", transport: "stdio", up: "mgelicit", cmd: []string{mgElicit}, tools: map[string]mxTool{"elicit-defaults": {"create_project", nil}, "elicit-enums": {"create_project", nil}}},
	}

	var cfg strings.Builder
	cfg.WriteString("[tool_search]\nenabled = false\n[server]\nmax_sessions_per_subject = 200\ndrain_timeout = \"0s\"\nshutdown_grace = \"1s\"\n")
	for _, s := range append(append([]*mxServer{}, servers...), extra...) {
		switch {
		case s.up == "":
		case s.url != "":
			fmt.Fprintf(&cfg, "[upstreams.%s]\nurl = %q\n", s.up, s.url)
		default:
			fmt.Fprintf(&cfg, "[upstreams.%s]\ncommand = %q\nargs = %s\n", s.up, s.cmd[0], tomlList(s.cmd[1:]))
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, writeConfig(t, cfg.String()), "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	front := "http://" + addr + "/mcp"

	// cells[impl/transport][gen][feature]
	var mu sync.Mutex
	cells := map[string]map[string]map[string]mxCell{}
	put := func(s *mxServer, gen, feature string, c mxCell) {
		mu.Lock()
		defer mu.Unlock()
		k := s.impl + "/" + s.transport
		if cells[k] == nil {
			cells[k] = map[string]map[string]mxCell{}
		}
		if cells[k][gen] == nil {
			cells[k][gen] = map[string]mxCell{}
		}
		if old, ok := cells[k][gen][feature]; ok && !strings.HasPrefix(old.verdict, "n/a") {
			return
		}
		cells[k][gen][feature] = c
	}
	t.Logf("servers and proxy up in %.1f s", time.Since(began).Seconds())
	t.Run("cells", func(t *testing.T) {
		// Every server's cells at once (t.Run from goroutines: not bound
		// by -parallel, which is the number of CPUs; the cells mostly wait).
		var all sync.WaitGroup
		defer all.Wait()
		for _, s := range append(append([]*mxServer{}, servers...), extra...) {
			all.Add(1)
			go t.Run(s.impl+"/"+s.transport+"/"+s.up, func(t *testing.T) {
				defer all.Done()
				for _, gen := range mxGenerations {
					for _, f := range mxFeatures {
						if why, ok := s.skip[f]; ok {
							put(s, gen, f, mxCell{verdict: "n/a: " + why})
						}
					}
					if s.up == "" {
						continue
					}
					mxRun(t, s, gen, front, put)
				}
				if s.up == "" || s.subscribe == "" {
					return
				}
				// Subscriptions of the three generations at once: no
				// question is asked, so nothing to tell apart, and the
				// updates come every few seconds.
				var wg sync.WaitGroup
				for _, gen := range mxGenerations {
					wg.Add(1)
					go func() { defer wg.Done(); mxRunSubscribe(t, s, gen, front, put) }()
				}
				wg.Wait()
			})
		}
	})
	for _, s := range servers {
		for _, gen := range mxGenerations {
			for _, f := range mxFeatures {
				mu.Lock()
				_, ok := cells[s.impl+"/"+s.transport][gen][f]
				mu.Unlock()
				if !ok {
					put(s, gen, f, mxCell{verdict: "n/a: the server has no tool for it"})
				}
			}
		}
	}
	t.Logf("cells done at %.1f s", time.Since(began).Seconds())
	t.Logf("compatibility matrix, through the proxy vs direct (= same outcome, + the proxy gives more, ≈ the same failure worded by another party, − a notification the server sent after the call's answer (mcp-go) not passed on, ≠ less or different, n/a not comparable):\n%s", mxTable(servers, cells))
	for k, byGen := range cells {
		for gen, byF := range byGen {
			for f, c := range byF {
				if c.verdict == "≠" {
					t.Errorf("%s %s %s: through the proxy differs from direct:\n  direct:  %s\n  through: %s", k, gen, f, c.direct, c.through)
				}
			}
		}
	}
}

func allSkipped(why string) map[string]string {
	m := map[string]string{}
	for _, f := range mxFeatures {
		m[f] = why
	}
	return m
}

func tomlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = tomlString(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// mxClient is a go-sdk client that answers every question (featureClient)
// and records progress and resource updates.
type mxClient struct {
	featureClient
	pmu      sync.Mutex
	progress map[string]int // progress notifications per token
	updated  chan string    // URIs of notifications/resources/updated
}

func newMXClient() *mxClient {
	return &mxClient{progress: map[string]int{}, updated: make(chan string, 64)}
}

func (m *mxClient) connect(t *testing.T, tr gosdk.Transport, gen string) *gosdk.ClientSession {
	o := m.options()
	o.ProgressNotificationHandler = func(_ context.Context, r *gosdk.ProgressNotificationClientRequest) {
		m.pmu.Lock()
		m.progress[fmt.Sprint(r.Params.ProgressToken)]++
		m.pmu.Unlock()
	}
	o.ResourceUpdatedHandler = func(_ context.Context, r *gosdk.ResourceUpdatedNotificationRequest) {
		select {
		case m.updated <- r.Params.URI:
		default:
		}
	}
	return connectAt(t, gosdk.NewClient(&gosdk.Implementation{Name: "matrix-client", Version: "1"}, o), tr, gen)
}

// mxRun runs every feature of s for one client generation, directly and
// through the proxy at front, each feature on sessions of its own (a
// feature's leftovers — a subscription's end, a question left unanswered
// — must not reach the next).
func mxRun(t *testing.T, s *mxServer, gen, front string, put func(*mxServer, string, string, mxCell)) {
	connect := func() (dc, pc *mxClient, dcs, pcs *gosdk.ClientSession) {
		var direct gosdk.Transport
		if s.url != "" {
			direct = &gosdk.StreamableClientTransport{Endpoint: s.url}
		} else {
			direct = &gosdk.CommandTransport{Command: exec.Command(s.cmd[0], s.cmd[1:]...)}
		}
		dc, pc = newMXClient(), newMXClient()
		dcs = dc.connect(t, direct, gen)
		pcs = pc.connect(t, &gosdk.StreamableClientTransport{Endpoint: front}, gen)
		if gen < "2026-07-28" {
			for _, cs := range []*gosdk.ClientSession{dcs, pcs} {
				if err := cs.SetLoggingLevel(context.Background(), &gosdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Logf("%s %s: logging/setLevel: %v", s.up, gen, err)
				}
			}
		}
		return dc, pc, dcs, pcs
	}
	// Elicitation last: a 2026-07-28 client that gives up on a question
	// (the go-sdk client refuses the enums schema) leaves the upstream's
	// call waiting for its answer until the exchange expires, and a later
	// call of that client (2026-07-28 has no session) could not be told
	// from another client's (TestConcurrentClientsRouting).
	order := []string{"logging", "progress", "cancel", "subscribe", "sampling", "elicit-defaults", "elicit-enums"}
	for _, f := range order {
		if _, skip := s.skip[f]; skip {
			continue
		}
		if f == "subscribe" {
			continue // mxRunSubscribe
		}
		tool, ok := s.tools[f]
		if !ok {
			continue
		}
		var c mxCell
		for attempt := 1; attempt <= 3; attempt++ {
			dc, pc, dcs, pcs := connect()
			d := mxOutcome(dcs, dc, f, tool.name, tool.args, gen)
			p := mxOutcome(pcs, pc, f, s.up+"__"+tool.name, tool.args, gen)
			_ = dcs.Close()
			_ = pcs.Close()
			c = mxVerdict(f, d, p)
			// Counts of notifications sent just before the answer can
			// differ from run to run either way (a message handled after
			// the answer; mcp-go hands a session's notifications to
			// whichever of its open streams reads first): compared again.
			if c.verdict != "≠" || (f != "logging" && f != "progress") {
				break
			}
		}
		put(s, gen, f, c)
	}
}

// mxRunSubscribe is the subscription cell of s for one generation.
func mxRunSubscribe(t *testing.T, s *mxServer, gen, front string, put func(*mxServer, string, string, mxCell)) {
	var direct gosdk.Transport
	if s.url != "" {
		direct = &gosdk.StreamableClientTransport{Endpoint: s.url}
	} else {
		direct = &gosdk.CommandTransport{Command: exec.Command(s.cmd[0], s.cmd[1:]...)}
	}
	dc, pc := newMXClient(), newMXClient()
	dcs := dc.connect(t, direct, gen)
	pcs := pc.connect(t, &gosdk.StreamableClientTransport{Endpoint: front}, gen)
	defer dcs.Close()
	defer pcs.Close()
	var d, p string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d = mxSubscribe(dcs, dc, s, s.subscribe, "") }()
	go func() { defer wg.Done(); p = mxSubscribe(pcs, pc, s, mxExposedURI(pcs, s.up, s.subscribe), s.up+"__") }()
	wg.Wait()
	put(s, gen, "subscribe", mxVerdict("subscribe", d, p))
}

// mxVerdict compares a cell's outcomes. Differences allowed, each
// asserted by its shape:
//   - "+": the proxy gives more. Directly a 2026-07-28 client is refused
//     by a server whose tool asks it itself (the SDK forbids such requests
//     at 2026-07-28); through the proxy's initialize-era leg the question
//     reaches it. Directly a stateless server cannot send resource
//     updates; through the proxy's 2026-07-28 leg (subscriptions/listen)
//     they come.
//   - "≈": the same failure, worded by another party: the server cannot
//     ask this client either way (directly: a stateless session, through
//     the proxy's 2026-07-28 leg to that stateless server: the SDK's
//     rule), or the go-sdk client itself refuses the requested schema
//     (as a failed tool directly, where the server speaks only
//     2025-11-25, as a failed call through the proxy, which speaks
//     2026-07-28 and asks through an input_required result).
func mxVerdict(feature, direct, through string) mxCell {
	c := mxCell{direct: direct, through: through, verdict: "="}
	if direct == through {
		return c
	}
	refusedAt2026 := func(s string) bool {
		return strings.Contains(s, "cannot be sent while serving a request on protocol version 2026-07-28") ||
			strings.Contains(s, "server-initiated request") && strings.Contains(s, "not supported")
	}
	cannotAsk := func(s string) bool {
		return refusedAt2026(s) || strings.Contains(s, "rejected by transport: stateless") || strings.Contains(s, "client does not support")
	}
	switch {
	case refusedAt2026(direct) && !refusedAt2026(through) && (!strings.HasPrefix(through, "error") || strings.Contains(through, "items must specify enum")):
		// (the enums form reaches the client, which refuses that schema
		// itself, as it does at 2025-11-25)
		c.verdict = "+"
	case feature == "logging" && !strings.Contains(direct, " logs=") && strings.Contains(through, " logs=") && strings.HasPrefix(direct, "isError=false") && strings.HasPrefix(through, "isError=false"):
		// Directly the server speaks only 2025-11-25 and the 2026-07-28
		// client's _meta logLevel means nothing there; through the proxy
		// it speaks 2026-07-28 and gets its call's log messages.
		c.verdict = "+"
	case feature == "subscribe" && strings.HasSuffix(direct, "no update in 6 s") && strings.HasSuffix(through, "; updated"):
		c.verdict = "+"
	case (feature == "logging" || feature == "progress") && fewerNotes(direct, through):
		// Known gap, mcp-go's: it can send a call's notification after
		// the call's answer (over stdio it writes notifications from a
		// queue and answers directly; over Streamable HTTP it hands a
		// session's notifications to whichever of the session's streams
		// reads first, and the proxy keeps a standalone GET stream open).
		// A client connected directly still counts it; the proxy passes
		// nothing for a call it has answered (progress MUST only name
		// active requests, spec basic/utilities/progress).
		c.verdict = "−"
	case (feature == "logging" || feature == "progress") && fewerNotes(through, direct):
		// The same gap seen from the other side: the client connected
		// directly missed a notification the server sent after its answer
		// (it reads them on a stream the answer does not wait for), the
		// proxy relayed every one it got while the call was open. Nothing
		// is lost through the proxy, so the cell is the same outcome.
		c.verdict = "="
	case cannotAsk(direct) && cannotAsk(through) && failedPrefix(direct) == failedPrefix(through):
		c.verdict = "≈"
	case strings.Contains(direct, "items must specify enum") && strings.Contains(through, "items must specify enum"):
		c.verdict = "≈"
	default:
		c.verdict = "≠"
	}
	return c
}

// fewerNotes reports whether through is direct with 1 or more of its log
// messages (" logs=N") or progress notifications (" progress=N"), but
// fewer than all; the rest equal.
func fewerNotes(direct, through string) bool {
	count := func(s string) (string, int) {
		for _, k := range []string{" logs=", " progress="} {
			if i := strings.LastIndex(s, k); i >= 0 {
				var n int
				_, _ = fmt.Sscanf(s[i+len(k):], "%d", &n)
				return s[:i], n
			}
		}
		return s, 0
	}
	dr, dn := count(direct)
	tr, tn := count(through)
	return dr == tr && tn >= 1 && tn < dn
}

// failedPrefix is an isError outcome's text up to the first colon (the
// tool's own words: "isError=true sampling failed").
func failedPrefix(s string) string {
	before, _, _ := strings.Cut(s, ":")
	return before
}

// mxOutcome is what the client sees of one feature's call; the upstream
// name the proxy puts in its error texts (`upstream "NAME": `) is left out.
func mxOutcome(cs *gosdk.ClientSession, m *mxClient, feature, name string, args map[string]any, gen string) string {
	out := mxOutcomeRaw(cs, m, feature, name, args, gen)
	if feature != "logging" {
		// A server's own log messages (server-everything's "Roots
		// updated") are not the feature compared here.
		if i := strings.LastIndex(out, " logs="); i >= 0 {
			out = out[:i]
		}
	}
	if up, _, ok := strings.Cut(name, "__"); ok {
		out = strings.ReplaceAll(out, fmt.Sprintf("upstream %q: ", up), "")
	}
	return out
}

func mxOutcomeRaw(cs *gosdk.ClientSession, m *mxClient, feature, name string, args map[string]any, gen string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if args == nil {
		args = map[string]any{} // not null: server-everything refuses "arguments": null
	}
	p := &gosdk.CallToolParams{Name: name, Arguments: args}
	switch feature {
	case "logging":
		if gen >= "2026-07-28" {
			p.Meta = gosdk.Meta{"io.modelcontextprotocol/logLevel": "debug"}
		}
		return callOutcomeParams(ctx, &m.featureClient, cs, p)
	case "progress":
		tok := fmt.Sprintf("pt-%d", time.Now().UnixNano())
		p.Meta = gosdk.Meta{"progressToken": tok}
		res, err := cs.CallTool(ctx, p)
		time.Sleep(400 * time.Millisecond) // notifications handled after the answer
		m.pmu.Lock()
		n := m.progress[tok]
		m.pmu.Unlock()
		if err != nil {
			return fmt.Sprintf("error: %v; progress=%d", err, n)
		}
		// The text is left out: go-sdk's tool answers with the progress
		// token, which the proxy replaces by its own for each call.
		return fmt.Sprintf("isError=%v progress=%d", res.IsError, n)
	case "cancel":
		// With a progress token: mcp-go's longRunningOperation reads
		// params._meta without a nil check (a call without _meta panics).
		p.Meta = gosdk.Meta{"progressToken": fmt.Sprintf("c-%d", time.Now().UnixNano())}
		cctx, ccancel := context.WithCancel(ctx)
		time.AfterFunc(500*time.Millisecond, ccancel)
		start := time.Now()
		_, err := cs.CallTool(cctx, p)
		took := time.Since(start)
		out := "completed"
		if err != nil {
			out = "error: " + err.Error()
			if errors.Is(err, context.Canceled) && took < 3*time.Second {
				out = "cancelled promptly"
			}
		}
		// The session goes on (tools/list: ping is not a 2026-07-28 method).
		if _, lerr := cs.ListTools(ctx, nil); lerr != nil {
			out += "; then tools/list failed: " + lerr.Error()
		} else {
			out += "; then tools/list ok"
		}
		return out
	}
	return callOutcomeParams(ctx, &m.featureClient, cs, p)
}

// mxExposedURI is the URI the proxy exposes for up's resource uri
// (rewritten to mcp-toolsearch://up/uri when it clashes).
func mxExposedURI(cs *gosdk.ClientSession, up, uri string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rewritten := "mcp-toolsearch://" + up + "/" + uri
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			break
		}
		if r.URI == rewritten {
			return rewritten
		}
	}
	return uri
}

// mxSubscribe subscribes to uri and says whether an update for it came
// within 6 s (server-everything: after its toggle tool, prefixed as
// given).
func mxSubscribe(cs *gosdk.ClientSession, m *mxClient, s *mxServer, uri, prefix string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// server-everything's toggle is per upstream session: directly each
	// client has its own; through the proxy all share one, toggled once.
	if s.toggle != "" && (prefix == "" || s.toggled.CompareAndSwap(false, true)) {
		if _, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: prefix + s.toggle}); err != nil {
			return "toggle: " + err.Error()
		}
	}
	if err := cs.Subscribe(ctx, &gosdk.SubscribeParams{URI: uri}); err != nil {
		return "subscribe: error: " + strings.ReplaceAll(err.Error(), uri, "URI")
	}
	defer func() { _ = cs.Unsubscribe(context.Background(), &gosdk.UnsubscribeParams{URI: uri}) }()
	deadline := time.After(6 * time.Second)
	for {
		select {
		case got := <-m.updated:
			if got == uri {
				return "subscribe ok; updated"
			}
		case <-deadline:
			return "subscribe ok; no update in 6 s"
		}
	}
}

// mxTable prints the matrix: one line per implementation/transport and
// generation, one column per feature.
func mxTable(servers []*mxServer, cells map[string]map[string]map[string]mxCell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-17s %-11s", "upstream", "client")
	for _, f := range mxFeatures {
		fmt.Fprintf(&b, " %-15s", f)
	}
	b.WriteString("\n")
	var notes []string
	seen := map[string]bool{}
	for _, s := range servers {
		k := s.impl + "/" + s.transport
		for _, gen := range mxGenerations {
			fmt.Fprintf(&b, "%-17s %-11s", k, gen)
			for _, f := range mxFeatures {
				c := cells[k][gen][f]
				v := c.verdict
				if why, ok := strings.CutPrefix(v, "n/a: "); ok {
					if !seen[why] {
						seen[why] = true
						notes = append(notes, why)
					}
					v = fmt.Sprintf("n/a[%d]", slicesIndex(notes, why)+1)
				}
				fmt.Fprintf(&b, " %-15s", v)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
	for i, n := range notes {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, n)
	}
	b.WriteString("\nOutcomes (direct → through where they differ, else the shared outcome):\n")
	var lines []string
	for _, s := range servers {
		k := s.impl + "/" + s.transport
		for _, gen := range mxGenerations {
			for _, f := range mxFeatures {
				c := cells[k][gen][f]
				switch {
				case strings.HasPrefix(c.verdict, "n/a"):
				case c.verdict == "=":
					lines = append(lines, fmt.Sprintf("  %s %s %s: %s", k, gen, f, truncateStr(c.direct, 110)))
				default:
					lines = append(lines, fmt.Sprintf("  %s %s %s [%s]: %s → %s", k, gen, f, c.verdict, truncateStr(c.direct, 90), truncateStr(c.through, 90)))
				}
			}
		}
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

func slicesIndex(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func truncateStr(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
