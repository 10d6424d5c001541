package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestFrontSessionDeleteOwner: a DELETE of a session by a user who does
// not own it is refused by the go-sdk (403) and leaves the session as it
// was: its calls still run (review r9: sessionGate ended the session's
// requests in flight, and cancelled every later call of it for good,
// before the owner was checked).
func TestFrontSessionDeleteOwner(t *testing.T) {
	env := startIdentityEnv(t, "")
	p := env.P
	alice := map[string]string{"Authorization": "Bearer " + env.AS.Mint("alice", []string{env.MCP}, "", 0)}
	bob := map[string]string{"Authorization": "Bearer " + env.AS.Mint("bob", []string{env.MCP}, "", 0)}
	c := openSession(t, p, env.MCP, "owner-d", alice)
	for _, hdr := range []map[string]string{bob, nil} {
		req, err := http.NewRequest(http.MethodDelete, env.MCP, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Session-Id", c.sid)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		t.Logf("DELETE by %v: %d", hdr != nil, resp.StatusCode)
		if resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusOK {
			t.Fatalf("DELETE of alice's session by %v: %d", hdr, resp.StatusCode)
		}
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ex__whoami","arguments":{}}}`
	if a := c.post(call, alice); a.status != http.StatusOK || !strings.Contains(a.body, "alice") {
		t.Fatalf("alice's call after bob's DELETE: %s", a)
	}
	slow := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ex__whoami","arguments":{},"_meta":{"progressToken":"p"}}}`
	if a := c.post(slow, alice); a.status != http.StatusOK || !strings.Contains(a.body, "alice") {
		t.Fatalf("alice's go-sdk path call after bob's DELETE: %s", a)
	}
}
