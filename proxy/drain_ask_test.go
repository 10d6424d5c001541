package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDrainFailsQuestionToClient: a tools/call of a
// stateful 2025-11-25 HTTP session that waits for its client's answer to
// an approval request (elicitation/create on the call's POST stream) when
// the HTTP front's drain starts gets its answer at once, the approval
// refused as the proxy is shutting down, instead of waiting for an answer
// that can no longer arrive (a new POST: the listener and idle
// connections are closed at the signal) until server.drain_timeout cuts
// it. On the fast path and on the go-sdk's (a log level set keeps the
// fast path off). The drain's start is played by drains.begin (what
// ServeHTTP calls at the signal); approval_timeout is long enough never
// to end the question by itself.
func TestDrainFailsQuestionToClient(t *testing.T) {
	for _, path := range []string{"fast", "go-sdk"} {
		t.Run(path, func(t *testing.T) {
			p, up := testProxy(t, "[server]\ntransport = \"http\"\n"+strings.Replace(approvalConfig, `approval_timeout = "5s"`, `approval_timeout = "1h"`, 1))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			asked, gone := make(chan struct{}, 1), make(chan struct{})
			cl := mcp.NewClient(&mcp.Implementation{Name: "drain-" + path, Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(hctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- struct{}{}
					select { // the person never answers
					case <-hctx.Done():
					case <-gone:
					}
					return nil, errors.New("no answer")
				}})
			cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: frontURL(t, p), DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			defer close(gone) // before cs.Close, which waits for the handler
			if path == "go-sdk" {
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
					t.Fatal(err)
				}
			} else {
				waitFor(t, "the session ready for the fast path", func() bool {
					return p.hsess.Ready(cs.ID())
				})
			}
			before, ran := p.hsess.Calls.Load(), up.count("delete_thing")
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__delete_thing", Arguments: map[string]any{"name": "x"}})
				if err != nil {
					t.Errorf("the call: %v", err)
				}
				done <- res
			}()
			waitSignal(t, asked, "the approval was not asked")
			p.drains.begin()
			var r *mcp.CallToolResult
			select {
			case r = <-done:
			case <-ctx.Done():
				t.Fatal("the call waiting for its approval got no answer after the drain started")
			}
			if r == nil {
				t.FailNow()
			}
			assertBlocked(t, r, up, "", "shutting down")
			if up.count("delete_thing") != ran {
				t.Error("the call reached the upstream")
			}
			fast := p.hsess.Calls.Load() - before
			if (path == "fast") != (fast == 1) {
				t.Errorf("the fast path served %d calls on the %s path", fast, path)
			}
		})
	}
}
