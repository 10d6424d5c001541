package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rules is one table of rules as written in the config ([tools],
// [endpoints.NAME].tools, [tools.by_client."PATTERN"]).
type Rules struct {
	Profile   string   // "full" | "minimal" | a [profiles.NAME]; "" inherits
	Allow     []string // nil: not set; non-nil (even empty): an explicit allow list
	Deny      []string
	AlsoAllow []string
}

// Profile is a [profiles.NAME] table: a named base allow list.
type Profile struct {
	Allow []string
	Deny  []string
}

// Upstream names one configured upstream (enabled or not, so that
// "group:<upstream>" stays valid when it is switched off) and the two
// namespaces its tools live in, used to decide whether a rule covers the
// whole upstream (its resources, prompts and completions; see
// View.Features).
type Upstream struct {
	Name string
	// NamePrefix is the start of every exposed name of its tools: prefix
	// plus name separator ("github__"), or "" when the prefix is "".
	NamePrefix string
	// IDPrefix is the start of every tool id ("mcp:github:").
	IDPrefix string
}

// Spec is a deployment's policy as written: the input of Validate and
// Compile. Map keys are as configured.
type Spec struct {
	Tools           Rules            // [tools]
	RequireApproval []string         // [tools] require_approval
	ByClient        map[string]Rules // [tools.by_client."PATTERN"]
	Profiles        map[string]Profile
	Groups          map[string][]string
	Endpoints       map[string]Rules // [endpoints.NAME].tools
	Upstreams       []Upstream
	// NameSeparator is server.name_separator ("__"). With one of two or
	// more characters, an entry "NAME__…" whose NAME is no upstream's
	// prefix is an error (unknownUpstream); "" skips that check.
	NameSeparator string
}

// Problem is one error in a Spec, at a config key.
type Problem struct {
	// Path is the config key, e.g. {"tools", "by_client", "cursor*", "profile"}.
	Path []string
	// Index is the position in the list at Path, or -1 for the key itself.
	Index int
	// Msg says what is wrong, without the key, e.g. `unknown profile "codng"`.
	Msg string
	// Name and Candidates are set for an unknown name: the name as written
	// ("codng", "group:gh") and the names that exist, in the same form
	// ("full", "group:github"), for a "did you mean" hint. ListCandidates
	// says the message is to list them when there is no close match.
	Name           string
	Candidates     []string
	ListCandidates bool
	// Note, when set, follows the hint: how to write what may have been
	// meant otherwise.
	Note string
}

// Key renders Path and Index the way TOML writes keys:
// `tools.by_client."cursor*".allow[2]`.
func (p Problem) Key() string {
	parts := make([]string, len(p.Path))
	for i, k := range p.Path {
		if bareKey.MatchString(k) {
			parts[i] = k
		} else {
			parts[i] = strconv.Quote(k)
		}
	}
	s := strings.Join(parts, ".")
	if p.Index >= 0 {
		s += fmt.Sprintf("[%d]", p.Index)
	}
	return s
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Error is "KEY: MSG", with the known names when ListCandidates is set.
func (p Problem) Error() string {
	msg := p.Msg
	if p.ListCandidates && len(p.Candidates) > 0 {
		msg += " (known: " + quoteList(p.Candidates) + ")"
	}
	if p.Note != "" {
		msg += "; " + p.Note
	}
	if k := p.Key(); k != "" {
		return k + ": " + msg
	}
	return msg
}

// Problems is every problem Compile found, in a stable order.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// quoteList renders names as `"a", "b"`.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
