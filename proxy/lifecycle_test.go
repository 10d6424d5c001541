package proxy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A catalog change while a client is connected but has
// not sent initialize yet puts nothing on the wire before the initialize
// answer; after initialize the client gets notifications/tools/list_changed.
func TestNoListChangedBeforeInitialize(t *testing.T) {
	p, _ := testProxy(t, validateConfig)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msgs := make(chan jsonrpc.Message, 16)
	go func() {
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- m
		}
	}()
	p.notifyToolsChanged()
	time.Sleep(200 * time.Millisecond) // the go-sdk sends list_changed 10 ms after a change
	send := func(id int64, method string, params any) {
		t.Helper()
		raw, _ := json.Marshal(params)
		var req *jsonrpc.Request
		if id == 0 {
			req = &jsonrpc.Request{Method: method, Params: raw}
		} else {
			req = &jsonrpc.Request{ID: mustID(t, id), Method: method, Params: raw}
		}
		if err := conn.Write(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	send(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	first := <-msgs
	if r, ok := first.(*jsonrpc.Response); !ok || r.ID.Raw() != int64(1) {
		t.Fatalf("first message before the initialize answer: %#v", first)
	}
	send(0, "notifications/initialized", map[string]any{})
	p.notifyToolsChanged()
	select {
	case m := <-msgs:
		if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "notifications/tools/list_changed" {
			t.Errorf("after initialize: %#v, want notifications/tools/list_changed", m)
		}
	case <-time.After(10 * time.Second):
		t.Error("no notifications/tools/list_changed after initialize")
	}
}

func mustID(t *testing.T, id int64) jsonrpc.ID {
	t.Helper()
	v, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
