package proxy

import (
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// TestClientNameOfAsTheSDK: the client name the
// Mcp-Param-* check and the HTTP fast path read from a client-declared
// clientInfo is the one the go-sdk's session gets (keys matched with
// case), so a decoy "NAME" cannot make the check evaluate another
// client's policy.
func TestClientNameOfAsTheSDK(t *testing.T) {
	for raw, want := range map[string]string{
		`{"name":"good","version":"1","NAME":"evil"}`: "good",
		`{"NAME":"evil","version":"1"}`:               "",
		`{"name":"a","name":"b"}`:                     "b",
		`not json`:                                    "",
	} {
		if got := front.ClientNameOf([]byte(raw)); got != want {
			t.Errorf("front.ClientNameOf(%s) = %q, want %q", raw, got, want)
		}
	}
}
