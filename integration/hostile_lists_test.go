//go:build unix

package integration

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// Hostile upstreams met by desktop clients over stdio.

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream that announces resources, prompts and logging but never
// answers resources/list, resources/templates/list, prompts/list or
// logging/setLevel must not hold those requests of a client: each answer
// comes once the proxy's 10 s bound on a running upstream's part has
// passed, with the other upstream's items, and the log names the upstream
// and the bound. Before, the proxy asked the upstreams one after the other
// with no bound: the client's request hung until the client gave up
// (Claude Desktop and the Inspector list resources and prompts and set the
// log level when they connect). The hanging upstream's startup_timeout is
// "3m", what `init` writes for an npx server: the bound does not follow it
// (with the bound at startup_timeout, these requests waited 3
// minutes, longer than clients wait; the client's deadline below is 2
// minutes).
func TestHangingUpstreamListsDoNotHoldClients(t *testing.T) {
	cfg := writeConfig(t, `
[tool_search]
enabled = false

[upstreams.good]
command = `+tomlString(gosdkEverything(t))+`

[upstreams.hang]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "hanglists"]
startup_timeout = "3m"
`)
	cmd := proxyCmd(t, cfg)
	cs, stderr := gosdkClientStdioLog(t, cmd)
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || caps.Prompts == nil {
		t.Fatalf("the proxy should announce resources and prompts (both upstreams do): %+v", caps)
	}

	// Shorter than the hanging upstream's startup_timeout (3m): answers
	// bounded by it would fail here. The four requests go at once (each
	// waits for the 10 s bound).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		wg   sync.WaitGroup
		res  *gosdk.ListResourcesResult
		tpl  *gosdk.ListResourceTemplatesResult
		pr   *gosdk.ListPromptsResult
		errs [4]error
	)
	wg.Add(4)
	go func() { defer wg.Done(); res, errs[0] = cs.ListResources(ctx, nil) }()
	go func() { defer wg.Done(); tpl, errs[1] = cs.ListResourceTemplates(ctx, nil) }()
	go func() { defer wg.Done(); pr, errs[2] = cs.ListPrompts(ctx, nil) }()
	go func() {
		defer wg.Done()
		errs[3] = cs.SetLoggingLevel(ctx, &gosdk.SetLoggingLevelParams{Level: "info"})
	}()
	wg.Wait()
	for i, m := range []string{"resources/list", "resources/templates/list", "prompts/list", "logging/setLevel"} {
		if errs[i] != nil {
			t.Fatalf("%s with one upstream never answering: %v\nlog:\n%s", m, errs[i], tail(stderr.String(), 20))
		}
	}
	if len(res.Resources) == 0 {
		t.Errorf("resources/list: no resources of the upstream that answers")
	}
	if len(tpl.ResourceTemplates) == 0 {
		t.Errorf("resources/templates/list: no templates of the upstream that answers")
	}
	var names []string
	for _, p := range pr.Prompts {
		names = append(names, p.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "good__greet") {
		t.Errorf("prompts/list: %v, want good__greet among them", names)
	}
	// The tools of the hanging upstream still work.
	r, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "hang__echo", Arguments: map[string]any{}})
	if err != nil || r.IsError {
		t.Fatalf("hang__echo: %v %+v", err, r)
	}
	log := stderr.String()
	for _, want := range []string{
		`msg="resources/list: upstream failed" upstream=hang err="no answer to resources/list within 10s; the answer goes on without this upstream"`,
		`msg="resources/templates/list: upstream failed" upstream=hang err="no answer to resources/templates/list within 10s; the answer goes on without this upstream"`,
		`msg="prompts/list: upstream failed" upstream=hang err="no answer to prompts/list within 10s; the answer goes on without this upstream"`,
		`msg="logging/setLevel: upstream failed" upstream=hang err="no answer to logging/setLevel within 10s; the answer goes on without this upstream"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s\nlog:\n%s", want, tail(log, 30))
		}
	}
}

// The proxy's bound on an upstream's stderr lines in its log
// (upstream/stdio.go stderrBurst, stderrPerSecond).
const (
	stderrBurstLines     = 200
	stderrLinesPerSecond = 20
)

// An upstream that writes to stderr in a loop (and never answers
// initialize, so its lines are logged at INFO all along) must not fill the
// proxy's log: a desktop client keeps the proxy's stderr in a file. The
// proxy logs a burst of its lines, then at most a few a second, and says
// how many it dropped, naming the upstream. Before, every line was logged:
// 378 MB in 30 s.
func TestStderrFloodIsRateLimitedInLog(t *testing.T) {
	cfg := writeConfig(t, `
[server]
startup_wait = "0s"
shutdown_grace = "1s"

[tool_search]
enabled = false

[upstreams.noisy]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "stderrflood"]
startup_timeout = "3s"
`)
	cmd := []string{buildProxy(t), "serve", "--config", cfg} // default log level: info
	cs, stderr := gosdkClientStdioLog(t, cmd)
	// Let it flood until the first summary (10 s after the first dropped
	// line), through several start attempts.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(stderr.String(), `msg="upstream stderr lines dropped from the log (rate limit)"`) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	_ = cs.Close()
	log := stderr.String()
	// The bound is the limiter's own: each start attempt's child may log a
	// burst of 200 lines, then 20 a second of its life; the children run
	// one after the other. So the lines logged are at most 200 per attempt
	// plus 20 a second of the time between the first and the last line
	// logged, read from the log's own timestamps (one second more: a line
	// is stamped after it took its token, and stamps have milliseconds):
	// how long the test ran on a loaded machine neither loosens nor breaks
	// it. A flood is hundreds of thousands of lines in this time.
	var first, last time.Time
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `msg="upstream stderr" upstream=noisy`) {
			continue
		}
		n++
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatalf("log line without a time: %q", line)
		}
		if first.IsZero() {
			first = at
		}
		last = at
	}
	attempts := strings.Count(log, `msg="upstream connection failed" upstream=noisy`) + 1
	span := last.Sub(first)
	bound := attempts*stderrBurstLines + int((span.Seconds()+1)*stderrLinesPerSecond)
	t.Logf("%d stderr lines logged, bound %d (%d attempts, %v)", n, bound, attempts, span)
	if n == 0 || n > bound {
		t.Errorf("%d stderr lines of the flooding upstream in the log (%d bytes); want between 1 and %d (%d attempts, %v between the first and the last line)", n, len(log), bound, attempts, span)
	}
	if !strings.Contains(log, `msg="upstream writes to stderr faster than the log takes; dropping its lines from the log for a while" upstream=noisy`) {
		t.Errorf("no line says the upstream's stderr lines are dropped\nlog tail:\n%s", tail(log, 10))
	}
	if !strings.Contains(log, `msg="upstream stderr lines dropped from the log (rate limit)" upstream=noisy`) {
		t.Errorf("no summary of the dropped lines\nlog tail:\n%s", tail(log, 10))
	}
}

// An upstream that sends 50 elicitation/create requests at once during a
// call reaches the client with at most 8 of them waiting at a time; the
// others are refused with an error naming the bound (the upstream sees
// it), and the user is not flooded with questions. Before, every request
// was relayed (417 questions during one call).
func TestElicitationFloodIsBounded(t *testing.T) {
	cfg := writeConfig(t, `
[tool_search]
enabled = false

[upstreams.ask]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "elicitflood"]
`)
	cmd := proxyCmd(t, cfg)
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Env = os.Environ()
	var stderr lockedBuffer
	c.Stderr = &stderr
	var mu sync.Mutex
	waiting, most, asked := 0, 0, 0
	client := gosdk.NewClient(&gosdk.Implementation{Name: "elicit-client", Version: "1"}, &gosdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			mu.Lock()
			waiting++
			asked++
			most = max(most, waiting)
			mu.Unlock()
			time.Sleep(time.Second) // a person reading the question
			mu.Lock()
			waiting--
			mu.Unlock()
			return &gosdk.ElicitResult{Action: "decline"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &gosdk.CommandTransport{Command: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "ask__flood", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("ask__flood: %v\nlog:\n%s", err, tail(stderr.String(), 20))
	}
	text := ""
	if len(r.Content) > 0 {
		if tc, ok := r.Content[0].(*gosdk.TextContent); ok {
			text = tc.Text
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("client asked %d questions, at most %d at once; upstream: %s", asked, most, text)
	if most > 8 {
		t.Errorf("the client had %d questions of one upstream waiting at once; want at most 8", most)
	}
	if !strings.Contains(text, "requests of this upstream already wait for this client's answer") {
		t.Errorf("the upstream's refused requests do not name the bound: %s", text)
	}
	if n := strings.Count(stderr.String(), `msg="upstream request refused" upstream=ask`); n > 2 {
		t.Errorf("%d refusal lines in the log; want one (then a summary)", n)
	}
}
