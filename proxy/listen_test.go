package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListenResourceUpdates2026: a 2026-07-28 client subscribes to an
// upstream resource (the go-sdk opens subscriptions/listen with
// resourceSubscriptions); the proxy subscribes upstream (on its
// initialize-era leg, resources/subscribe) and relays the upstream's
// notifications/resources/updated onto the listen stream. Through the
// default (stateful) front and through a stateless replica.
func TestListenResourceUpdates2026(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			subscribed := make(chan string, 4)
			up := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, &mcp.ServerOptions{
				SubscribeHandler:   func(_ context.Context, r *mcp.SubscribeRequest) error { subscribed <- r.Params.URI; return nil },
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			})
			up.AddResource(&mcp.Resource{URI: "res://doc", Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "res://doc", Text: "v1"}}}, nil
			})
			uh := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
			t.Cleanup(uh.Close)
			p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = %v\n[upstreams.r]\nurl = %s\n", stateless, tomlQuote(uh.URL)))
			url := frontURL(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			updated := make(chan string, 4)
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
			})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
				t.Fatalf("negotiated %q, want %q", v, modernVersion)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "res://doc"}); err != nil {
				t.Fatal(err)
			}
			select {
			case u := <-subscribed:
				if u != "res://doc" {
					t.Fatalf("upstream subscription to %q", u)
				}
			case <-ctx.Done():
				t.Fatal("the upstream never got resources/subscribe")
			}
			if err := up.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "res://doc"}); err != nil {
				t.Fatal(err)
			}
			select {
			case u := <-updated:
				if u != "res://doc" {
					t.Errorf("client told %q was updated", u)
				}
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated on the listen stream")
			}
		})
	}
}
