package telemetry

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics through an HTTP server and parses the text
// exposition format with expfmt's TextParser.
// It returns the type of each family by name and the raw body.
func scrape(t *testing.T, m *Metrics) (types map[string]string, body string) {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, b)
	}
	types = map[string]string{}
	for name, mf := range mfs {
		types[name] = mf.GetType().String()
	}
	return types, string(b)
}

// lookup finds the sample of family name whose labels are exactly labels.
// It returns a counter's or gauge's value, or a histogram's sum and count.
type lookup func(name string, labels map[string]string) (value float64, found bool, histCount uint64)

// families scrapes m once over HTTP, parses the text format with expfmt's
// TextParser, and returns a lookup over the parsed families.
func families(t *testing.T, m *Metrics) lookup {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return func(name string, labels map[string]string) (float64, bool, uint64) {
		mf, ok := mfs[name]
		if !ok {
			return 0, false, 0
		}
	next:
		for _, metric := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range metric.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if len(got) != len(labels) {
				continue
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case metric.GetCounter() != nil:
				return metric.GetCounter().GetValue(), true, 0
			case metric.GetGauge() != nil:
				return metric.GetGauge().GetValue(), true, 0
			case metric.GetHistogram() != nil:
				h := metric.GetHistogram()
				return h.GetSampleSum(), true, h.GetSampleCount()
			}
		}
		return 0, false, 0
	}
}

func findSample(t *testing.T, m *Metrics, name string, labels map[string]string) (value float64, found bool, histCount uint64) {
	t.Helper()
	return families(t, m)(name, labels)
}

func counterValue(t *testing.T, m *Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok, _ := findSample(t, m, name, labels)
	if !ok {
		t.Fatalf("no sample %s%v", name, labels)
	}
	return v
}

func gaugeValue(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	return counterValue(t, m, name, map[string]string{})
}

func TestMetricsScrape(t *testing.T) {
	m := NewMetrics()
	r, _ := NewRecorder("", false, m)
	s := r.StartSession(SessionInfo{ID: "x", Mode: "code"})
	script(s) // 2 searches, 1 describe, 2 calls (big ok 12.5 ms, cal blocked_approval 3 ms), 1 ok code run
	s.CodeRun(10000, false, true, 0, 0, 0)
	s.CodeRun(5, false, false, 0, 0, 0)
	m.ObserveCall("big", OutcomeOK, 0.5)
	m.ObserveCall("big", "made-up outcome", 1)
	m.ObserveCall("", OutcomeUnavailable, 0)
	m.SetCatalogSize("big", false, 500)
	m.SetCatalogSize("cal", true, 2)
	m.SetUpstreamUp("big", true)
	m.SetUpstreamUp("cal", false)
	other := r.StartSession(SessionInfo{ID: "y", Mode: "tools"})
	other.Search("tools", "q", 0, false)
	other.Describe("tools", "mcp:cal:create_event", false, false)

	want := []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "big", "outcome": "ok"}, 2},
		{"mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "big", "outcome": "other"}, 1},
		{"mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "cal", "outcome": "blocked_approval"}, 1},
		{"mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "unknown", "outcome": "unavailable"}, 1},
		{"mcp_toolsearch_searches_total", map[string]string{"mode": "code"}, 2},
		{"mcp_toolsearch_searches_total", map[string]string{"mode": "tools"}, 1},
		{"mcp_toolsearch_describes_total", map[string]string{"mode": "code"}, 1},
		{"mcp_toolsearch_describes_total", map[string]string{"mode": "tools"}, 1},
		{"mcp_toolsearch_code_runs_total", map[string]string{"outcome": "ok"}, 1},
		{"mcp_toolsearch_code_runs_total", map[string]string{"outcome": "timeout"}, 1},
		{"mcp_toolsearch_code_runs_total", map[string]string{"outcome": "error"}, 1},
		{"mcp_toolsearch_catalog_tools", map[string]string{"upstream": "big", "trust": "untrusted"}, 500},
		{"mcp_toolsearch_catalog_tools", map[string]string{"upstream": "cal", "trust": "trusted"}, 2},
		{"mcp_toolsearch_upstream_up", map[string]string{"upstream": "big"}, 1},
		{"mcp_toolsearch_upstream_up", map[string]string{"upstream": "cal"}, 0},
		{"mcp_toolsearch_sessions_active", map[string]string{}, 2},
	}
	mfs := families(t, m)
	for _, w := range want {
		if got, ok, _ := mfs(w.name, w.labels); !ok || got != w.value {
			t.Errorf("%s%v = %v (found %v), want %v", w.name, w.labels, got, ok, w.value)
		}
	}
	sum, ok, count := mfs("mcp_toolsearch_tool_call_duration_seconds", map[string]string{"upstream": "big"})
	if !ok || count != 3 || sum != 0.0125+0.5+1 {
		t.Errorf("duration{big}: found=%v count=%d sum=%v, want 3 and 1.5125", ok, count, sum)
	}
	s.End()
	if got := gaugeValue(t, m, "mcp_toolsearch_sessions_active"); got != 1 {
		t.Errorf("sessions_active after one End = %v, want 1", got)
	}

	types, body := scrape(t, m)
	for name, typ := range map[string]string{
		"mcp_toolsearch_tool_call_duration_seconds": "HISTOGRAM",
		"mcp_toolsearch_tool_calls_total":           "COUNTER",
		"mcp_toolsearch_sessions_active":            "GAUGE",
		"go_goroutines":                             "GAUGE",
	} {
		if types[name] != typ {
			t.Errorf("%s type = %q, want %s", name, types[name], typ)
		}
	}
	for _, bound := range []string{`le="0.0005"`, `le="30"`} {
		if !strings.Contains(body, bound) {
			t.Errorf("histogram lacks bucket %s", bound)
		}
	}
	// Tool ids, queries and argument values are never labels.
	for _, leak := range []string{"tool_0042", "create_event", secretQuery, secretArg} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics contains %q", leak)
		}
	}

	m.DeleteUpstream("big")
	if _, ok, _ := findSample(t, m, "mcp_toolsearch_upstream_up", map[string]string{"upstream": "big"}); ok {
		t.Error("DeleteUpstream left upstream_up{big}")
	}
}

func TestMetricsRegistriesAreIndependent(t *testing.T) {
	a, b := NewMetrics(), NewMetrics() // would panic on a shared registry
	a.IncSearch("code")
	if _, ok, _ := findSample(t, b, "mcp_toolsearch_searches_total", map[string]string{"mode": "code"}); ok {
		t.Error("a search on one Metrics shows on another")
	}
	var nilM *Metrics // no-ops
	nilM.IncSearch("code")
	nilM.ObserveCall("u", "ok", 1)
	rec := httptest.NewRecorder()
	nilM.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Errorf("nil Metrics handler = %d", rec.Code)
	}
}

func TestHealthHandler(t *testing.T) {
	ready := true
	h := HealthHandler(func() (bool, any) {
		return ready, map[string]any{"upstreams": map[string]bool{"big": ready}}
	})
	get := func(method string) (int, map[string]any, http.Header) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/healthz", nil))
		var body map[string]any
		if rec.Body.Len() > 0 {
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil && method == "GET" {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
		}
		return rec.Code, body, rec.Header()
	}
	code, body, hdr := get("GET")
	if code != 200 || body["status"] != "ok" || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("ready: %d %v %v", code, body, hdr)
	}
	if up := body["detail"].(map[string]any)["upstreams"].(map[string]any)["big"]; up != true {
		t.Errorf("detail = %v", body["detail"])
	}
	ready = false
	if code, body, _ = get("GET"); code != 503 || body["status"] != "unavailable" {
		t.Errorf("not ready: %d %v", code, body)
	}
	if code, body, _ = get("HEAD"); code != 503 || body != nil {
		t.Errorf("HEAD: %d %v", code, body)
	}
	if code, _, hdr = get("POST"); code != 405 || hdr.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", code, hdr)
	}
	rec := httptest.NewRecorder()
	HealthHandler(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
		t.Errorf("nil ready: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	HealthHandler(func() (bool, any) { return true, func() {} }).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "detail not encodable") {
		t.Errorf("unencodable detail: %d %s", rec.Code, rec.Body)
	}
}

// TestObserveCallAfterDeleteUpstream: ObserveCall's cached series go with
// DeleteUpstream, so a later call of a re-added upstream counts from 0 in
// a series /metrics shows.
func TestObserveCallAfterDeleteUpstream(t *testing.T) {
	m := NewMetrics()
	m.ObserveCall("gh", OutcomeOK, 0.01)
	m.ObserveCall("gh", OutcomeOK, 0.01)
	labels := map[string]string{"upstream": "gh", "outcome": OutcomeOK}
	if v, ok, _ := findSample(t, m, "mcp_toolsearch_tool_calls_total", labels); !ok || v != 2 {
		t.Fatalf("tool_calls_total{gh,ok} = %v (present %v), want 2", v, ok)
	}
	m.DeleteUpstream("gh")
	if _, ok, _ := findSample(t, m, "mcp_toolsearch_tool_calls_total", labels); ok {
		t.Fatal("DeleteUpstream left tool_calls_total{gh}")
	}
	m.ObserveCall("gh", OutcomeOK, 0.01)
	if v, ok, _ := findSample(t, m, "mcp_toolsearch_tool_calls_total", labels); !ok || v != 1 {
		t.Fatalf("after DeleteUpstream, tool_calls_total{gh,ok} = %v (present %v), want 1", v, ok)
	}
}

// A call of an upstream that finishes while DeleteUpstream is between its
// two steps (cache dropped, registry series not yet) must not cache series
// that are then unregistered: the upstream, added again under the same
// name, would count its calls in series /metrics never shows.
// The interleaving is replayed in order: the call's cache miss waits
// for seriesMu, which DeleteUpstream holds across both steps.
func TestObserveCallBetweenDeleteUpstreamSteps(t *testing.T) {
	m := NewMetrics()
	m.ObserveCall("gh", OutcomeOK, 0.01)
	m.seriesMu.Lock() // DeleteUpstream("gh"), step by step
	m.dropCallCache("gh")
	done := make(chan struct{})
	go func() { // an in-flight call of the removed upstream ends now
		m.ObserveCall("gh", OutcomeOK, 0.01)
		close(done)
	}()
	waitFinishedOrLocked(done, "ObserveCall") // finished here: the interleaving of the review
	m.dropCallSeries("gh")
	m.seriesMu.Unlock()
	<-done
	for range 5 { // the upstream is back under the same name
		m.ObserveCall("gh", OutcomeOK, 0.01)
	}
	labels := map[string]string{"upstream": "gh", "outcome": OutcomeOK}
	if v, ok, _ := findSample(t, m, "mcp_toolsearch_tool_calls_total", labels); !ok || v != 6 {
		t.Fatalf("tool_calls_total{gh,ok} = %v (present %v), want 6: the late call and the 5 of the re-added upstream", v, ok)
	}
}

// DeleteUpstream racing calls of the same upstream: afterwards a call is
// always counted on /metrics.
func TestObserveCallDeleteUpstreamConcurrent(t *testing.T) {
	m := NewMetrics()
	labels := map[string]string{"upstream": "gh", "outcome": OutcomeOK}
	for round := 0; round < 200; round++ {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); m.ObserveCall("gh", OutcomeOK, 0.01) }()
		go func() { defer wg.Done(); m.DeleteUpstream("gh") }()
		wg.Wait()
		m.ObserveCall("gh", OutcomeOK, 0.01) // 1, or 2 when the racing call came after the delete
		if v, ok, _ := findSample(t, m, "mcp_toolsearch_tool_calls_total", labels); !ok || (v != 1 && v != 2) {
			t.Fatalf("round %d: tool_calls_total{gh,ok} = %v (present %v), want 1 or 2", round, v, ok)
		}
		m.DeleteUpstream("gh")
	}
}

// waitFinishedOrLocked returns once done is closed or a goroutine running
// fn waits on a mutex (its stack shows lockSlow): it lets a test replay an
// interleaving whether or not the code under test serialises it.
func waitFinishedOrLocked(done <-chan struct{}, fn string) {
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-done:
			return
		default:
		}
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, fn) && strings.Contains(g, "lockSlow") {
				return
			}
		}
		runtime.Gosched()
	}
}
