package config

import (
	"path/filepath"
	"strings"
)

// Security is the [security] table: how the proxy treats tool text it
// does not trust (docs/security.md). Trust: tool
// definitions come from upstream servers, which are not trusted.
type Security struct {
	// HiddenCharacters is what happens to a tool whose model-facing text
	// (title, description, schema descriptions and titles…) holds
	// characters a person cannot see but a model reads (the Unicode TAG
	// block, zero-width characters, bidi controls, variation selectors):
	// "strip" (default) removes them and flags the tool; "block"
	// quarantines the tool.
	HiddenCharacters string `toml:"hidden_characters"`
	// OnToolChange is what happens when a tool's definition (name, title,
	// description, inputSchema, outputSchema, annotations) differs from the
	// one pinned on first sight: "warn" (default) logs a warning, counts it
	// and pins the new definition; "block" keeps the tool off every surface
	// until `mcp-toolsearch approve ID`; "approve" keeps it listed but its
	// next call needs a person's yes (elicitation or tools.approval_command),
	// which pins the new definition.
	OnToolChange string `toml:"on_tool_change"`
	// PinsFile is the state file of the pinned definitions (JSON); default
	// "<config name>.pins.json" next to the config file; relative paths are
	// resolved against the config file's folder. Approvals made with
	// `mcp-toolsearch approve` go to PinsFile + ".approved".
	PinsFile string `toml:"pins_file"`
	// MaxToolBytes bounds one upstream tool's definition as the proxy
	// passes it on (its compact JSON after text strings longer than 16,384
	// characters were cut, the inputSchema as received included when the
	// proxy normalised it), in bytes; a larger tool is quarantined (package
	// ingest SizeBound). Default DefaultMaxToolBytes,
	// clamped to MinMaxToolBytes..MaxMaxToolBytes.
	MaxToolBytes int `toml:"max_tool_bytes"`
}

// Values of Security.
const (
	HiddenStrip   = "strip"
	HiddenBlock   = "block"
	ChangeWarn    = "warn"
	ChangeBlock   = "block"
	ChangeApprove = "approve"

	// DefaultMaxToolBytes is security.max_tool_bytes' default (128 KiB,
	// ingest.DefaultMaxToolBytes); MinMaxToolBytes and MaxMaxToolBytes its
	// clamp.
	DefaultMaxToolBytes = 128 << 10
	MinMaxToolBytes     = 16 << 10
	MaxMaxToolBytes     = 1 << 30
)

// securityDefaults fills and checks [security]; dir is the config file's
// folder ("" when parsed from bytes without a path: no pins file).
func (p *parser) securityDefaults(path, dir string) {
	s := &p.cfg.Security
	p.defaultString(&s.HiddenCharacters, HiddenStrip, "security", "hidden_characters")
	p.defaultString(&s.OnToolChange, ChangeWarn, "security", "on_tool_change")
	oneOf(p, s.HiddenCharacters, []string{HiddenStrip, HiddenBlock}, "security", "hidden_characters")
	oneOf(p, s.OnToolChange, []string{ChangeWarn, ChangeBlock, ChangeApprove}, "security", "on_tool_change")
	p.clampInt(&s.MaxToolBytes, DefaultMaxToolBytes, MinMaxToolBytes, MaxMaxToolBytes, "security", "max_tool_bytes")
	switch {
	case s.PinsFile != "":
		s.PinsFile = resolveFile(dir, s.PinsFile)
	case path != "":
		base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		s.PinsFile = filepath.Join(dir, base+".pins.json")
	}
}
