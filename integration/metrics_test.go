//go:build unix

package integration

// Prometheus metrics and /healthz of the real binary (SPEC §7):
// on the HTTP front, and on [telemetry] metrics_listen for stdio
// deployments. /metrics is parsed with the Prometheus text parser.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapedMetrics is one parsed /metrics response.
type scrapedMetrics struct {
	families map[string]*dto.MetricFamily
	body     string
}

// scrapeMetrics GETs url (an http://HOST:PORT/metrics URL) and parses the
// body with expfmt's TextParser, failing the test on a non-200 answer or a
// body that is not the Prometheus text format.
func scrapeMetrics(t *testing.T, url string) scrapedMetrics {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("GET %s: not the Prometheus text format: %v\n%s", url, err, tail(string(b), 2000))
	}
	return scrapedMetrics{families: mfs, body: string(b)}
}

// metric returns the sample of family name whose labels are exactly labels,
// failing the test when there is none.
func (s scrapedMetrics) metric(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mf, ok := s.families[name]
	if !ok {
		t.Fatalf("/metrics has no family %s", name)
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, lp := range m.GetLabel() {
			if labels[lp.GetName()] != lp.GetValue() {
				continue next
			}
		}
		return m
	}
	t.Fatalf("/metrics: no %s%v among %d series:\n%s", name, labels, len(mf.GetMetric()), grepLines(s.body, name))
	return nil
}

// value is a counter's or gauge's value.
func (s scrapedMetrics) value(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	m := s.metric(t, name, labels)
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s%v is neither a counter nor a gauge", name, labels)
	return 0
}

func grepLines(body, substr string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// getHealthz GETs url and returns the status code and decoded JSON body.
func getHealthz(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %s, body is not JSON: %v", url, resp.Status, err)
	}
	return resp.StatusCode, body
}

// callGo calls tool name with args through cs, failing on a protocol error.
func callGo(t *testing.T, cs *gosdk.ClientSession, name string, args map[string]any) *gosdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// TestMetricsHTTPFront runs the proxy over HTTP with one working upstream
// (12 tools, trusted, one tool answering isError) and one that cannot be
// reached (with a ${VAR} secret in its headers), makes calls with the
// official go-sdk client, then scrapes /metrics: calls by upstream and
// outcome, the latency histogram's count, the catalog size and upstream
// health; /healthz answers 200 with each upstream's state. Neither the
// argument values nor the secret appear in /metrics or the proxy's log.
func TestMetricsHTTPFront(t *testing.T) {
	deadAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // nothing listens here
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.gh]
command = %s
args = ["-tools", %s, "-is-error-tool", "update_issue"]
trusted = true

[upstreams.gone]
url = "http://%s/mcp"
headers = { Authorization = "Bearer ${METRICS_TOKEN}" }
startup_timeout = "2s"
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), deadAddr))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "debug"),
		[]string{"METRICS_TOKEN=" + secretToken}, "http://"+addr+"/mcp")

	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
	for i := 0; i < 3; i++ {
		res := callGo(t, cs, "gh__create_issue", map[string]any{"owner": "o", "repo": "r", "title": secretArgValue})
		if res.IsError {
			t.Fatalf("gh__create_issue: isError %v", res.Content)
		}
	}
	if res := callGo(t, cs, "gh__update_issue", map[string]any{"owner": "o", "repo": "r", "issue_number": 1, "body": secretArgValue}); !res.IsError {
		t.Fatalf("gh__update_issue: want isError (catalogserver -is-error-tool)")
	}

	m := scrapeMetrics(t, "http://"+addr+"/metrics")
	gh := map[string]string{"upstream": "gh"}
	for outcome, want := range map[string]float64{"ok": 3, "tool_error": 1} {
		if got := m.value(t, "mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "gh", "outcome": outcome}); got != want {
			t.Errorf("mcp_toolsearch_tool_calls_total{gh,%s} = %v, want %v", outcome, got, want)
		}
	}
	h := m.metric(t, "mcp_toolsearch_tool_call_duration_seconds", gh).GetHistogram()
	if h.GetSampleCount() != 4 || h.GetSampleSum() <= 0 {
		t.Errorf("duration histogram {gh}: count %d sum %v, want count 4 and a positive sum", h.GetSampleCount(), h.GetSampleSum())
	}
	if n := len(h.GetBucket()); n == 0 || h.GetBucket()[n-1].GetCumulativeCount() != 4 {
		t.Errorf("duration histogram {gh}: buckets %v, want the last cumulative count 4", h.GetBucket())
	}
	if got := m.value(t, "mcp_toolsearch_catalog_tools", map[string]string{"upstream": "gh", "trust": "trusted"}); got != 12 {
		t.Errorf("mcp_toolsearch_catalog_tools{gh,trusted} = %v, want 12", got)
	}
	if got := m.value(t, "mcp_toolsearch_upstream_up", gh); got != 1 {
		t.Errorf("mcp_toolsearch_upstream_up{gh} = %v, want 1", got)
	}
	if got := m.value(t, "mcp_toolsearch_upstream_up", map[string]string{"upstream": "gone"}); got != 0 {
		t.Errorf("mcp_toolsearch_upstream_up{gone} = %v, want 0", got)
	}
	if got := m.value(t, "mcp_toolsearch_sessions_active", map[string]string{}); got != 1 {
		t.Errorf("mcp_toolsearch_sessions_active = %v, want 1", got)
	}
	if mt := m.families["mcp_toolsearch_tool_call_duration_seconds"].GetType(); mt != dto.MetricType_HISTOGRAM {
		t.Errorf("mcp_toolsearch_tool_call_duration_seconds has type %v, want HISTOGRAM", mt)
	}

	code, body := getHealthz(t, "http://"+addr+"/healthz")
	if code != http.StatusOK || body["status"] != "ok" {
		t.Errorf("/healthz = %d %v, want 200 status ok", code, body)
	}
	if ups, _ := jpath(t, body, "detail", "upstreams").(map[string]any); ups["gh"] != "ready" || ups["gone"] == "ready" || ups["gone"] == nil {
		t.Errorf("/healthz detail.upstreams = %v, want gh ready and gone not ready", ups)
	}

	for _, s := range []string{secretArgValue, secretToken} {
		if strings.Contains(m.body, s) {
			t.Errorf("/metrics holds %q", s)
		}
		if strings.Contains(proc.Output(), s) {
			t.Errorf("proxy log (debug level) holds %q:\n%s", s, tail(proc.Output(), 3000))
		}
	}
}

// TestMetricsListenStdio is a stdio deployment with [telemetry]
// metrics_listen: while a client (official go-sdk, over stdio) is
// connected, /metrics and /healthz answer on that address, counting the
// client's calls; other paths are 404; once the client goes, the proxy
// exits and frees the port.
func TestMetricsListenStdio(t *testing.T) {
	maddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[telemetry]
metrics_listen = %q

[upstreams.gh]
command = %s
args = ["-tools", %s]
`, maddr, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	cs := gosdkClientStdio(t, proxyCmd(t, cfg))
	for i := 0; i < 2; i++ {
		callGo(t, cs, "gh__list_issues", map[string]any{"owner": "o", "repo": "r"})
	}

	m := scrapeMetrics(t, "http://"+maddr+"/metrics")
	if got := m.value(t, "mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "gh", "outcome": "ok"}); got != 2 {
		t.Errorf("mcp_toolsearch_tool_calls_total{gh,ok} = %v, want 2", got)
	}
	if got := m.metric(t, "mcp_toolsearch_tool_call_duration_seconds", map[string]string{"upstream": "gh"}).GetHistogram().GetSampleCount(); got != 2 {
		t.Errorf("duration histogram {gh} count = %d, want 2", got)
	}
	if got := m.value(t, "mcp_toolsearch_catalog_tools", map[string]string{"upstream": "gh", "trust": "untrusted"}); got != 12 {
		t.Errorf("mcp_toolsearch_catalog_tools{gh,untrusted} = %v, want 12", got)
	}
	if got := m.value(t, "mcp_toolsearch_sessions_active", map[string]string{}); got != 1 {
		t.Errorf("mcp_toolsearch_sessions_active = %v, want 1", got)
	}
	if code, body := getHealthz(t, "http://"+maddr+"/healthz"); code != http.StatusOK || body["status"] != "ok" {
		t.Errorf("/healthz = %d %v, want 200 status ok", code, body)
	}
	resp, err := http.Get("http://" + maddr + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /mcp on the metrics listener = %s, want 404 (MCP is on stdio)", resp.Status)
	}

	cs.Close()                               // stdin EOF: the proxy ends, and its metrics listener with it
	deadline := time.Now().Add(readyTimeout) // fail-safe bound, not a speed assertion
	for {
		c, err := net.DialTimeout("tcp", maddr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections %v after the client left", maddr, readyTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetricsListenBusy: a metrics_listen address that cannot be bound
// stops `serve` with exit 1 and an error naming the key, instead of
// serving without the metrics the config asked for.
func TestMetricsListenBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := writeConfig(t, fmt.Sprintf(`
[telemetry]
metrics_listen = %q

[upstreams.gh]
command = %s
args = ["-tools", %s]
`, ln.Addr().String(), tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	ctx, cancel := context.WithTimeout(context.Background(), nodeClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildProxy(t), "serve", "--config", cfg, "--mode", "off")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("serve with a busy metrics_listen: %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "telemetry.metrics_listen") || !strings.Contains(string(out), ln.Addr().String()) {
		t.Errorf("serve output does not name telemetry.metrics_listen and the address:\n%s", out)
	}
}
