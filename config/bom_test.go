package config

import (
	"strings"
	"testing"
)

// TestBOMAtStart: a config.toml saved by Windows Notepad as "UTF-8 with
// BOM" (EF BB BF first, CRLF line ends) is read as if the BOM were not
// there (the TOML parser skips it; TOML 1.0 files are UTF-8), and errors
// keep their line numbers.
func TestBOMAtStart(t *testing.T) {
	bom := "\xEF\xBB\xBF"
	cfg := mustParse(t, bom+strings.ReplaceAll("[tool_search]\nenabled = false\n"+minimal, "\n", "\r\n"), nil)
	if cfg.ToolSearch.Enabled || cfg.Upstreams["fs"].Command != "node" {
		t.Errorf("keys after a BOM not read: enabled %v, upstreams %v", cfg.ToolSearch.Enabled, cfg.Upstreams)
	}
	e := mustFail(t, bom+minimal+"bogus = 1\n", nil)
	if !strings.Contains(e.Error(), "config.toml:4: unknown key") {
		t.Errorf("line number after a BOM: %v", e)
	}
}
