package config

// Security is the [security] table: how the proxy treats tool text it
// does not trust (issue 14 items 1 and 2; docs/security.md). Trust: tool
// definitions come from upstream servers, which are not trusted.
type Security struct {
	// HiddenCharacters is what happens to a tool whose model-facing text
	// (title, description, schema descriptions and titles…) holds
	// characters a person cannot see but a model reads (the Unicode TAG
	// block, zero-width characters, bidi controls, variation selectors):
	// "strip" (default) removes them and flags the tool; "block"
	// quarantines the tool.
	HiddenCharacters string `toml:"hidden_characters"`
}

// Values of Security.
const (
	HiddenStrip = "strip"
	HiddenBlock = "block"
)

// securityDefaults fills and checks [security].
func (p *parser) securityDefaults() {
	s := &p.cfg.Security
	p.defaultString(&s.HiddenCharacters, HiddenStrip, "security", "hidden_characters")
	oneOf(p, s.HiddenCharacters, []string{HiddenStrip, HiddenBlock}, "security", "hidden_characters")
}
