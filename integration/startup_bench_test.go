//go:build unix

package integration

// Start-up with broken upstreams: the time from
// starting the proxy binary (stdio) to the client's first tools/list
// answer, with a healthy stdio upstream (go-sdk everything) alone and next
// to an upstream that stalls. The healthy upstream's own time (started
// and listed directly, no proxy) is the reference: the goal is at most
// 100 ms more.
//
//	go test ./integration -run XXX -bench StartupFirstList -benchtime 10x
//
// prints first_list_ms (median of the iterations) per case.

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"slices"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// firstList starts cmd as a stdio MCP server, initializes, lists tools and
// returns the time from the start to the answer (and the tool count).
func firstList(b *testing.B, argv []string) (time.Duration, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	t0 := time.Now()
	cs, err := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &gosdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	d := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	_ = cs.Close()
	return d, len(res.Tools)
}

func BenchmarkStartupFirstList(b *testing.B) {
	healthy := gosdkEverything(b)
	stall := &fakeupstream.HTTP{GET: "stall", Scenario: fakeupstream.Named("plain")}
	srv := httptest.NewServer(stall)
	b.Cleanup(srv.Close)
	fake := fakeUpstreamBin(b)
	base := "[upstreams.healthy]\ncommand = " + tomlString(healthy) + "\n"
	hung := "[upstreams.hung]\ncommand = " + tomlString(fake) + "\nargs = [\"-init-delay\", \"1h\"]\n"
	cases := []struct{ name, cfg, wait string }{ // wait: server.startup_wait (default 5s)
		{"proxy_healthy_only", base, "5s"},
		{"proxy_with_stalling_GET", base + "[upstreams.stall]\nurl = " + tomlString(srv.URL+"/mcp") + "\nstartup_timeout = \"5s\"\n", "5s"},
		{"proxy_with_never_initializing", base + hung, "5s"},
		{"proxy_with_never_initializing_wait0", base + hung, "0s"},
	}
	b.Run("direct_healthy", func(b *testing.B) {
		var ds []time.Duration
		for b.Loop() {
			d, _ := firstList(b, []string{healthy})
			ds = append(ds, d)
		}
		reportMedian(b, ds)
	})
	for _, c := range cases {
		cfg := writeConfig(b, "[tool_search]\nenabled = false\n"+c.cfg)
		b.Run(c.name, func(b *testing.B) {
			var ds []time.Duration
			tools := 0
			for b.Loop() {
				d, n := firstList(b, proxyCmd(b, cfg, "--startup-wait", c.wait))
				ds, tools = append(ds, d), n
			}
			reportMedian(b, ds)
			b.ReportMetric(float64(tools), "tools")
		})
	}
}

func reportMedian(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	m := ds[len(ds)/2]
	b.ReportMetric(float64(m.Microseconds())/1000, "first_list_ms")
	b.Logf("%s: first tools/list answer after %s (median of %d)", b.Name(), m.Round(time.Millisecond), len(ds))
}

// BenchmarkStartupSlowUpstream: the time from starting the proxy binary
// (stdio) to its first tools/list answer, per mode, with one real upstream
// that needs 4 s to start (the go-sdk everything server behind a shell
// that sleeps 4 s before exec'ing it) and the default server.startup_wait
// (5 s). The search modes answer at once (their searches wait instead);
// direct mode, whose tools/list is the catalog, waits for the upstream.
//
//	go test ./integration -run XXX -bench StartupSlowUpstream -benchtime 3x
//
// prints first_list_ms (median) and the tools listed, per mode.
func BenchmarkStartupSlowUpstream(b *testing.B) {
	slow := "[upstreams.slow]\ncommand = \"/bin/sh\"\nargs = [\"-c\", " + tomlString("sleep 4; exec "+gosdkEverything(b)) + "]\n"
	for _, mode := range []string{"direct", "tools", "code", "directory"} {
		ts := "[tool_search]\nenabled = true\nmode = \"" + mode + "\"\n"
		if mode == "direct" {
			ts = "[tool_search]\nenabled = false\n"
		}
		cfg := writeConfig(b, ts+slow)
		b.Run(mode, func(b *testing.B) {
			var ds []time.Duration
			tools := 0
			for b.Loop() {
				d, n := firstList(b, proxyCmd(b, cfg, "--startup-wait", "5s"))
				ds, tools = append(ds, d), n
			}
			reportMedian(b, ds)
			b.ReportMetric(float64(tools), "tools")
		})
	}
}
