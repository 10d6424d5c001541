package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// MaxNameLen is the longest exposed name (the common provider rule
// ^[a-zA-Z0-9_-]{1,64}$, SPEC §2).
const MaxNameLen = 64

// NameRE is the rule every exposed name satisfies (SPEC §2).
var NameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NameInput is one tool to be named: its catalog id, its upstream's prefix
// and its original name.
type NameInput struct {
	ID     string
	Prefix string
	Tool   string
}

// AssignNames gives every input a unique exposed name matching NameRE.
//
// The base name is Prefix+sep+Tool (or Tool alone when Prefix is ""),
// turned into ASCII: letters with diacritics lose them (NFKD), every other
// character outside [a-zA-Z0-9_-] becomes "_" (runs collapse to one "_").
// A tool name of which nothing survives (e.g. all CJK) becomes "tool". A
// base longer than 64 bytes, a base whose tool part did not survive, and
// every base that clashes case-insensitively
// with another input's base or with a reserved name (e.g. the mode's own
// tools), is cut and suffixed with "_" and 6 hex digits of SHA-256(ID)
// (more digits if that still clashes). Names depend only on the set of
// inputs, never on their order, so they survive restarts and start orders.
// The result maps ID to exposed name.
func AssignNames(inputs []NameInput, sep string, reserved []string) map[string]string {
	return AssignNamesMax(inputs, sep, reserved, MaxNameLen)
}

// AssignNamesMax is AssignNames with exposed names of at most maxLen
// bytes (16..MaxNameLen; outside, MaxNameLen): room a client's own prefix
// needs (Claude Code shows tools as mcp__<server>__<tool> and providers
// allow 64 characters in all; config server.client_prefix_room).
func AssignNamesMax(inputs []NameInput, sep string, reserved []string, maxLen int) map[string]string {
	if maxLen < 16 || maxLen > MaxNameLen {
		maxLen = MaxNameLen
	}
	type cand struct {
		id, base string
		force    bool // nothing of the tool name survived ASCII folding: always hashed
	}
	cands := make([]cand, 0, len(inputs))
	count := map[string]int{}
	for _, r := range reserved {
		count[strings.ToLower(r)] += 2 // a reserved name always clashes
	}
	for _, in := range inputs {
		b, force := baseOf(in, sep)
		cands = append(cands, cand{in.ID, b, force})
		count[strings.ToLower(b)]++
	}
	// Deterministic processing order, independent of input order.
	sort.Slice(cands, func(i, j int) bool { return cands[i].id < cands[j].id })
	out := make(map[string]string, len(cands))
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[strings.ToLower(r)] = true
	}
	// First the names that keep their base, so a hashed name can never
	// take a plain name away from another tool.
	for _, c := range cands {
		if count[strings.ToLower(c.base)] == 1 && len(c.base) <= maxLen && c.base != "" && !c.force {
			out[c.id] = c.base
			taken[strings.ToLower(c.base)] = true
		}
	}
	for _, c := range cands {
		if _, ok := out[c.id]; ok {
			continue
		}
		sum := sha256.Sum256([]byte(c.id))
		h := hex.EncodeToString(sum[:])
		for n := 6; ; n += 2 {
			suffix := "_" + h[:n]
			base := c.base
			if base == "" {
				base = "tool"
			}
			if len(base)+len(suffix) > maxLen {
				base = strings.TrimRight(base[:maxLen-len(suffix)], "_-")
			}
			name := base + suffix
			if !taken[strings.ToLower(name)] || n >= len(h) {
				out[c.id] = name
				taken[strings.ToLower(name)] = true
				break
			}
		}
	}
	return out
}

// baseOf is the name AssignNames tries first for in; force is set when
// nothing of the tool name survived ASCII folding (always hashed).
func baseOf(in NameInput, sep string) (base string, force bool) {
	raw := in.Tool
	if in.Prefix != "" {
		raw = in.Prefix + sep + in.Tool
	}
	base = asciiName(raw)
	force = asciiName(in.Tool) == ""
	if force { // e.g. a name entirely in CJK: "x__作成" -> "x__tool_<hash>"
		base = BaseName(in.Prefix, sep, in.Tool)
	}
	return base, force
}

// Clash is a set of tools that want the same exposed name
// (case-insensitively), or a tool that wants a reserved name (the mode's
// own tools): AssignNames gives each of them a hashed name instead, which
// is a rename the operator should hear about (an upstream with prefix ""
// or upstream names that nest, "alpha" and "alpha__x", can take a name
// another upstream's tool had).
type Clash struct {
	Name     string   // the name they want (as the first of IDs writes it)
	IDs      []string // the tools, sorted
	Reserved bool     // Name is a reserved name
}

// NameClashes returns the clashes among inputs, sorted by name.
func NameClashes(inputs []NameInput, sep string, reserved []string) []Clash {
	res := map[string]bool{}
	for _, r := range reserved {
		res[strings.ToLower(r)] = true
	}
	byName := map[string]*Clash{}
	for _, in := range inputs {
		b, force := baseOf(in, sep)
		if force || b == "" {
			continue
		}
		k := strings.ToLower(b)
		c := byName[k]
		if c == nil {
			c = &Clash{Name: b, Reserved: res[k]}
			byName[k] = c
		}
		c.IDs = append(c.IDs, in.ID)
	}
	var out []Clash
	for _, c := range byName {
		if len(c.IDs) > 1 || c.Reserved {
			sort.Strings(c.IDs)
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}

// asciiName turns s into [a-zA-Z0-9_-]* as described in AssignNames,
// without length limits.
func asciiName(s string) string {
	var b strings.Builder
	lastUnderscore := false
	for _, r := range norm.NFKD.String(s) {
		switch {
		case r < 128 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
			lastUnderscore = r == '_'
		case unicode.Is(unicode.Mn, r):
			// combining mark left by NFKD: dropped (é -> e)
		default:
			if !lastUnderscore {
				b.WriteByte('_')
				lastUnderscore = true
			}
		}
	}
	return strings.Trim(b.String(), "_")
}

// BaseName is the exposed name of a tool before clash and length
// suffixes: prefix+sep+tool (tool alone when prefix is ""), folded to ASCII
// as AssignNames does ("tool" for a name of which nothing survives).
func BaseName(prefix, sep, tool string) string {
	if asciiName(tool) == "" {
		tool = "tool"
	}
	if prefix != "" {
		return asciiName(prefix + sep + tool)
	}
	return asciiName(tool)
}

// ToolID returns the catalog id "mcp:<upstream>:<tool>" (SPEC §2).
func ToolID(upstream, tool string) string { return "mcp:" + upstream + ":" + tool }
