package catalog

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMakeHitTrustedAndUntrusted(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"mode":{"enum":["drip","flood"]}},"required":["id"]}`)
	out := json.RawMessage(`{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"paid":{"type":"boolean"}},"required":["id","paid"]}}`)
	e := &Entry{ID: "mcp:pay:list", Name: "list", Exposed: "pay__list", Upstream: "pay", Trusted: true,
		Description: "  List\n\tpayments   in a range. ", InputSchema: in, OutputSchema: out}
	h := MakeHit(e, 2.5, Bounds{})
	want := Hit{ID: "mcp:pay:list", Name: "pay__list", Description: "List payments in a range.", Source: "mcp/trusted",
		Upstream: "pay", Input: `{ id: string; mode?: "drip" | "flood" }`, Output: `Array<{ id: string; paid: boolean }>`, Score: 2.5}
	if h != want {
		t.Errorf("trusted hit:\n got %+v\nwant %+v", h, want)
	}
	u := *e
	u.Trusted = false
	h = MakeHit(&u, 1, Bounds{})
	if h.Input != "unknown" || h.Output != "" || h.Source != "mcp/untrusted" {
		t.Errorf("untrusted hit leaks schema: %+v", h)
	}
	// Trusted but incomplete: unknown input, no output.
	r := *e
	r.InputSchema = json.RawMessage(`{"$ref":"#"}`)
	r.OutputSchema = json.RawMessage(`{"type":"object"}`)
	h = MakeHit(&r, 1, Bounds{})
	if h.Input != "unknown" || h.Output != "" {
		t.Errorf("incomplete schemas rendered: %+v", h)
	}
	r.InputSchema = nil
	if h = MakeHit(&r, 1, Bounds{}); h.Input != "{}" {
		t.Errorf("no input schema: Input %q, want {}", h.Input)
	}
}

func TestShortDescription(t *testing.T) {
	long := strings.Repeat("word ", 100)
	got := ShortDescription(long, MaxHitDescription)
	if n := utf8.RuneCountInString(got); n > MaxHitDescription || !strings.HasSuffix(got, "…") || strings.Contains(got, "  ") {
		t.Errorf("cut: %d runes, %q", n, got)
	}
	exact := strings.Repeat("é", MaxHitDescription)
	if got := ShortDescription(exact, MaxHitDescription); got != exact {
		t.Errorf("exactly %d runes must not be cut", MaxHitDescription)
	}
	if got := ShortDescription(exact+"x", MaxHitDescription); utf8.RuneCountInString(got) != MaxHitDescription || !strings.HasSuffix(got, "é…") {
		t.Errorf("one over: %q", got)
	}
	if got := ShortDescription(" a \n\n b\x00c ", 0); got != "a b c" {
		t.Errorf("collapse: %q", got)
	}
}

// TestSnapshotHitCaches: Snapshot.Hit equals MakeHit with the given score,
// also when the hit is served from the snapshot's cache.
func TestSnapshotHitCaches(t *testing.T) {
	c := New("__", nil, []UpstreamInfo{{Name: "gh", Prefix: "gh", Trusted: true}})
	c.SetTools("gh", []*Entry{{Name: "create_issue", Description: "Create an issue",
		InputSchema: []byte(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)}})
	snap := c.Snapshot()
	e := snap.Entries[0]
	want := MakeHit(e, 2.5, DefaultBounds())
	if got := snap.Hit(e, 2.5, DefaultBounds()); got != want {
		t.Fatalf("Hit = %+v, want %+v", got, want)
	}
	if got := snap.Hit(e, 7, DefaultBounds()); got.Score != 7 || got.Input != want.Input {
		t.Fatalf("cached hit = %+v", got)
	}
}
