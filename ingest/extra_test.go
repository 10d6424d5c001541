package ingest

import (
	"strings"
	"testing"
)

// The members mcp.Tool does not know ("execution" of MCP
// 2025-11-25, a later or extension member) are kept as received; members it
// decodes under another spelling ("Name", an escaped key) never are, so
// nothing can stand beside the proxy's own "name".
func TestExtraMembersKept(t *testing.T) {
	r := Default().Run("ev", raws(
		`{"name":"task","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"},"x-vendor":[1,"two"]}`,
		`{"name":"plain","inputSchema":{"type":"object"}}`,
		`{"name":"spoof","Name":"other","\u006eame":"x","TITLE":"t","inputSchema":{"type":"object"},"exe\u0063ution":{"taskSupport":"optional"}}`,
		`{"name":"again","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"execution":{"taskSupport":"forbidden"}}`,
	))
	if len(r.Tools) != 4 {
		t.Fatalf("tools %d, diagnostics %v", len(r.Tools), r.Diagnostics)
	}
	want := map[string]string{
		"task":  `{"execution":{"taskSupport":"required"},"x-vendor":[1,"two"]}`,
		"x":     `{"exe\u0063ution":{"taskSupport":"optional"}}`, // the last name member wins, as encoding/json decodes it
		"again": `{"execution":{"taskSupport":"forbidden"}}`,
	}
	for name, w := range want {
		if got := string(r.Extra[name]); got != w {
			t.Errorf("extra of %s = %s, want %s", name, got, w)
		}
	}
	if _, ok := r.Extra["plain"]; ok || len(r.Extra) != 3 {
		t.Errorf("extra = %v, want only task, x and again", r.Extra)
	}
}

// Hidden-character screening holds for extra members: their strings are stripped of
// hidden characters (warn) or the tool is quarantined (block); a member
// name holding them quarantines the tool in either mode.
func TestExtraMembersHiddenCharacters(t *testing.T) {
	tag := string(rune(0xE0041)) // TAG LATIN CAPITAL LETTER A
	in := raws(
		`{"name":"hid","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional","note":"ok`+tag+`"}}`,
		`{"name":"key","inputSchema":{"type":"object"},"x`+tag+`":1}`,
	)
	r := New(HiddenChars{}).Run("u", in)
	if got := string(r.Extra["hid"]); strings.Contains(got, tag) || !strings.Contains(got, `"note":"ok"`) || !strings.Contains(got, `"taskSupport":"optional"`) {
		t.Errorf("warn: extra of hid = %s, want the tag character stripped and the rest kept", got)
	}
	if d := diagOf(r, "key"); d == nil || d.Action != Quarantined || !strings.Contains(d.Detail, "member name") {
		t.Errorf("warn: key diagnostic = %+v, want quarantined for its member name", d)
	}
	r = New(HiddenChars{Block: true}).Run("u", in)
	if len(r.Tools) != 0 {
		t.Errorf("block: %d tools passed, want both quarantined (%v)", len(r.Tools), r.Diagnostics)
	}
}
