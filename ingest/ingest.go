// Package ingest is the single point every upstream tool passes on its way
// into the proxy: each tools/list answer of every upstream session (shared
// or per-client, first listing or re-listing after
// notifications/tools/list_changed) is split into its tools, and each tool
// is checked ON ITS OWN by a pipeline of steps that may normalise it (a
// missing root "type" gets "object") or quarantine it (kept off every
// surface). One bad tool never takes the others of its upstream down.
//
// Every decision is a Diagnostic: the upstream package keeps those of the
// last listing in its Status (shown by `mcp-toolsearch list` and `check`),
// logs them once per change, and the proxy exports the counts as metrics.
//
// Trust: tool definitions come from upstream servers, which are not
// trusted (docs/design.md "Trust"). Nothing here assumes a well-formed
// listing: the built-in decode step bounds the nesting depth before
// decoding, so a hostile definition costs one linear scan.
//
// # Adding a step (extension point)
//
// A step is anything with a Name and an Apply(*Tool) error method (or a
// StepFunc). Apply sees one tool that already decoded (t.Tool, with
// InputSchema and OutputSchema as json.RawMessage exactly as received,
// unless an earlier step changed them); it may change t.Tool in place and
// record what it changed with t.Normalise, or return an error to
// quarantine the tool (the error text is the diagnostic's detail; the
// remaining steps are skipped). Steps run in the order given to New. The
// proxy builds its pipeline in one place, proxy/ingest.go (ingestSteps);
// add new steps there, at their place in the order. A step that keeps state
// across listings (e.g. pinning a tool's definition) keys it by t.Upstream
// and t.Tool.Name and must be safe for concurrent use: listings of
// different upstreams run concurrently.
package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Action is what a step did to a tool.
type Action string

const (
	// Normalised: the tool is exposed with a change (Diagnostic.Field says
	// which part, Diagnostic.Original holds it as received).
	Normalised Action = "normalised"
	// Quarantined: the tool is kept off every surface (tools/list, search,
	// describe, calls).
	Quarantined Action = "quarantined"
)

// Diagnostic is one decision about one tool of one listing.
type Diagnostic struct {
	Upstream string `json:"upstream"`
	// Tool is the tool's name as received; "#N" (its 1-based position in
	// the listing) when it has no usable name.
	Tool   string `json:"tool"`
	Step   string `json:"step"`
	Action Action `json:"action"`
	Detail string `json:"detail"`
	// Field is the member a normalisation changed ("inputSchema",
	// "outputSchema", ...); Original is its JSON as received (nil when it
	// was absent). Both are empty for a quarantine.
	Field    string          `json:"field,omitempty"`
	Original json.RawMessage `json:"original,omitempty"`
	// Logged is set when the step that made the diagnostic logged it
	// itself (under its own rate limit, e.g. the proxy's pinning step):
	// Log skips it and Same ignores it, so a definition that changes at
	// every listing does not log a line per listing here.
	Logged bool `json:"-"`
}

// String is a one-line form for logs and the CLI.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s %s (%s): %s", displayName(d.Tool), d.Action, d.Step, d.Detail)
}

// Tool is one tool on its way through the pipeline.
type Tool struct {
	// Upstream is the configured upstream name.
	Upstream string
	// Index is the tool's 0-based position in the listing.
	Index int
	// Raw is the tool's JSON exactly as the upstream sent it.
	Raw json.RawMessage
	// Tool is the decoded tool; InputSchema and OutputSchema hold
	// json.RawMessage values (or nil). Steps may change it in place.
	Tool *mcp.Tool
	// Extra is the members of Raw that Tool does not carry (mcp.Tool of
	// go-sdk v1.8.0 drops "execution" of MCP 2025-11-25 and any member a
	// later revision or an extension adds), as one JSON object in the
	// order received; nil when there are none. Direct mode lists them
	// and describe shows them; steps may change them (HiddenChars strips
	// their strings).
	Extra json.RawMessage

	step  string // the running step's name
	diags []Diagnostic
}

// Normalise records that the running step changed field (original is its
// JSON before the change; nil when it was absent), with detail saying how.
func (t *Tool) Normalise(field string, original json.RawMessage, detail string) {
	t.diags = append(t.diags, Diagnostic{Upstream: t.Upstream, Tool: t.name(), Step: t.step, Action: Normalised, Detail: detail, Field: field, Original: original})
}

// NormaliseLogged is Normalise for a step that has logged the
// normalisation itself (Diagnostic.Logged).
func (t *Tool) NormaliseLogged(field string, original json.RawMessage, detail string) {
	t.Normalise(field, original, detail)
	t.diags[len(t.diags)-1].Logged = true
}

func (t *Tool) name() string {
	if t.Tool != nil && t.Tool.Name != "" {
		return t.Tool.Name
	}
	return "#" + strconv.Itoa(t.Index+1)
}

// Step is one stage of the pipeline; see the package documentation.
type Step interface {
	Name() string
	Apply(t *Tool) error
}

// ListingStep is a Step that is told where a listing starts and ends
// (Pipeline.Run calls BeginListing before the listing's first tool and
// the returned end after its last), e.g. to write its state once per
// listing instead of once per tool.
type ListingStep interface {
	Step
	BeginListing(upstream string) (end func())
}

// StepFunc makes a Step of a name and a function.
type StepFunc struct {
	StepName string
	F        func(t *Tool) error
}

func (s StepFunc) Name() string        { return s.StepName }
func (s StepFunc) Apply(t *Tool) error { return s.F(t) }

// Pipeline runs the built-in decode step, then its steps, over each tool
// of a listing. It is immutable and safe for concurrent use.
type Pipeline struct {
	steps []Step
}

// New returns a pipeline running steps (in order) after the built-in
// decode step.
func New(steps ...Step) *Pipeline {
	return &Pipeline{steps: append([]Step(nil), steps...)}
}

// Default is the pipeline with the built-in steps only: decode, then
// SchemaShape.
func Default() *Pipeline { return New(SchemaShape{}) }

// Steps returns the names of the steps, decode first (logs, docs).
func (p *Pipeline) Steps() []string {
	out := []string{StepDecode}
	for _, s := range p.steps {
		out = append(out, s.Name())
	}
	return out
}

// Result is the outcome of one listing.
type Result struct {
	// Tools are the tools that passed, in listing order; never nil (a
	// listing of zero tools is a valid, healthy answer).
	Tools []*mcp.Tool
	// Diagnostics are every step's decisions, in listing order.
	Diagnostics []Diagnostic
	// Extra is each passed tool's Tool.Extra by tool name (tools without
	// extra members are absent; nil when no tool has any).
	Extra map[string]json.RawMessage
}

// Quarantined counts the quarantined tools.
func (r Result) Quarantined() int { q, _ := Counts(r.Diagnostics); return q }

// Normalised counts the tools with at least one normalisation.
func (r Result) Normalised() int { _, n := Counts(r.Diagnostics); return n }

// Counts returns how many tools ds quarantine and how many (other) tools
// they normalise.
func Counts(ds []Diagnostic) (quarantined, normalised int) {
	q := map[string]bool{}
	for _, d := range ds {
		if d.Action == Quarantined {
			q[d.Tool] = true
			quarantined++
		}
	}
	n := map[string]bool{}
	for _, d := range ds {
		if d.Action == Normalised && !q[d.Tool] {
			n[d.Tool] = true
		}
	}
	return quarantined, len(n)
}

// Run passes each raw tool (one element of a tools/list "tools" array
// each, as received) through the pipeline. A tool whose name an earlier
// tool of the same listing already has is quarantined (MCP tool names are
// unique per server).
func (p *Pipeline) Run(upstream string, raws []json.RawMessage) Result {
	res := Result{Tools: make([]*mcp.Tool, 0, len(raws))}
	names := make(map[string]bool, len(raws))
	for _, s := range p.steps {
		if ls, ok := s.(ListingStep); ok {
			defer ls.BeginListing(upstream)()
		}
	}
	for i, raw := range raws {
		t := &Tool{Upstream: upstream, Index: i, Raw: raw}
		ok := p.one(t, names)
		res.Diagnostics = append(res.Diagnostics, t.diags...)
		if ok {
			res.Tools = append(res.Tools, t.Tool)
			if len(t.Extra) > 0 {
				if res.Extra == nil {
					res.Extra = map[string]json.RawMessage{}
				}
				res.Extra[t.Tool.Name] = t.Extra
			}
		}
	}
	return res
}

func (p *Pipeline) one(t *Tool, names map[string]bool) bool {
	t.step = StepDecode
	if err := decode(t); err != nil {
		t.quarantine(err)
		return false
	}
	if names[t.Tool.Name] {
		t.quarantine(fmt.Errorf("another tool of this listing already has the name %q", t.Tool.Name))
		return false
	}
	names[t.Tool.Name] = true
	for _, s := range p.steps {
		t.step = s.Name()
		if err := s.Apply(t); err != nil {
			t.quarantine(err)
			return false
		}
	}
	return true
}

func (t *Tool) quarantine(err error) {
	t.diags = append(t.diags, Diagnostic{Upstream: t.Upstream, Tool: t.name(), Step: t.step, Action: Quarantined, Detail: err.Error()})
}

// Log writes one record per diagnostic: WARN for a quarantine, INFO for
// a normalisation. log is expected to carry the upstream's name already.
func Log(log *slog.Logger, ds []Diagnostic) {
	for _, d := range ds {
		if d.Logged {
			continue
		}
		level := slog.LevelInfo
		msg := "tool normalised"
		if d.Action == Quarantined {
			level, msg = slog.LevelWarn, "tool quarantined: kept off every surface"
		}
		log.Log(context.Background(), level, msg, "tool", d.Tool, "step", d.Step, "detail", d.Detail)
	}
}

// Same reports whether two diagnostic lists say the same (to log a
// re-listing's diagnostics only when they changed). Diagnostics a step
// logged itself (Logged) are left out of the comparison.
func Same(a, b []Diagnostic) bool {
	a, b = unlogged(a), unlogged(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Tool != b[i].Tool || a[i].Step != b[i].Step || a[i].Action != b[i].Action || a[i].Detail != b[i].Detail {
			return false
		}
	}
	return true
}

// unlogged is ds without the diagnostics a step logged itself (ds itself
// when there are none).
func unlogged(ds []Diagnostic) []Diagnostic {
	for i, d := range ds {
		if d.Logged {
			out := append([]Diagnostic(nil), ds[:i]...)
			for _, d := range ds[i+1:] {
				if !d.Logged {
					out = append(out, d)
				}
			}
			return out
		}
	}
	return ds
}
