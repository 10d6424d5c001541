package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/pins"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// Rug pulls. Trust: tool definitions come from upstream
// servers, which are not trusted; a definition a person (or the operator's
// config) accepted may be swapped for another after the fact. Every tool
// is pinned on first sight (package pins); a later listing with a
// different definition gets security.on_tool_change:
//
//   - "warn": a warning in the log, a count in
//     mcp_toolsearch_tool_changes_total{action="warned"}, a diagnostic in
//     `list`/`check` for that listing, and the new definition is pinned;
//   - "block": the tool is quarantined (off every surface) until
//     `mcp-toolsearch approve ID`; the running proxy sees the approval
//     within approvalPoll and lists the upstream again;
//   - "approve": the tool stays listed; its next call, through the one call
//     path, asks a person (elicitation or tools.approval_command) and pins
//     the new definition on yes.
//
// The changed tool is decided by policy again like every tool of every
// listing (policy decides per name; a definition change cannot widen it).

// StepPins is the name of the pinning step in diagnostics.
const StepPins = "pins"

// approvalPoll is how often the proxy looks for `mcp-toolsearch approve`.
const approvalPoll = 2 * time.Second

// pinGuard holds the pins store of a proxy and its approvals watcher.
type pinGuard struct {
	store   *pins.Store
	log     *slog.Logger
	metrics *telemetry.Metrics
	warns   *pinWarnings // "warn" mode's log lines, limited per upstream (pinlog.go)
	stop    context.CancelFunc
	done    chan struct{}
}

// start runs watch until close (once; nil-safe).
func (g *pinGuard) start(watch func(context.Context)) {
	if g == nil || g.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.stop, g.done = cancel, make(chan struct{})
	go func() { defer close(g.done); watch(ctx) }()
}

// close stops the watcher and waits for it (nil-safe).
func (g *pinGuard) close() {
	if g == nil || g.stop == nil {
		return
	}
	g.stop()
	<-g.done
}

// openPins opens the pins store of cfg (security.pins_file; in memory when
// the config has no path).
func (p *Proxy) openPins(cfg *config.Config) error {
	st, err := pins.Open(cfg.Security.PinsFile)
	if err != nil {
		return fmt.Errorf("security.pins_file: %w", err)
	}
	p.pins = &pinGuard{store: st, log: p.log, metrics: p.metrics, warns: &pinWarnings{log: p.log}}
	return nil
}

// step is the pinning step of the ingest pipeline for cfg's
// security.on_tool_change. It runs first, on the definition as received.
// It writes the pins file once per listing (pinStep.BeginListing).
func (g *pinGuard) step(cfg *config.Config) ingest.Step {
	return pinStep{g: g, mode: cfg.Security.OnToolChange}
}

// pinStep is guard g's pinning step (an ingest.ListingStep).
type pinStep struct {
	g    *pinGuard
	mode string // security.on_tool_change
}

func (s pinStep) Name() string { return StepPins }

// BeginListing holds the pins file's writes until the listing's end
// (pins.Store.Hold): one write per listing, not one per new tool.
func (s pinStep) BeginListing(upstream string) (end func()) {
	release := s.g.store.Hold()
	return func() {
		if err := release(); err != nil {
			s.g.log.Warn("cannot save the pinned tool definitions", "upstream", upstream, "error", err.Error())
		}
	}
}

func (s pinStep) Apply(t *ingest.Tool) error {
	g, mode := s.g, s.mode
	id := catalog.ToolID(t.Upstream, t.Tool.Name)
	hash := pins.HashWith(t.Tool, t.Extra) // extra members too (execution, …)
	v, old, err := g.store.Check(id, hash)
	if err != nil {
		g.log.Warn("cannot save the pinned tool definitions", "error", err.Error())
	}
	if v != pins.Changed {
		return nil
	}
	what := fmt.Sprintf("its definition changed since it was pinned on %s (%s… → %s…)", old.Since, pins.Short(old.Hash), pins.Short(hash))
	log := g.log.With("upstream", t.Upstream, "tool", t.Tool.Name, "id", id, "pinned", pins.Short(old.Hash), "now", pins.Short(hash))
	switch mode {
	case config.ChangeBlock, config.ChangeApprove:
		first, err := g.store.SetPending(id, hash)
		if err != nil {
			g.log.Warn("cannot save the pinned tool definitions", "error", err.Error())
		}
		if mode == config.ChangeBlock {
			if first {
				g.metrics.ToolChanged(t.Upstream, "blocked")
				log.Warn("tool definition changed: kept off every surface until approved (mcp-toolsearch approve ID)")
			}
			return fmt.Errorf("%s: kept off every surface until `mcp-toolsearch approve %s` (security.on_tool_change = \"block\")", what, id)
		}
		if first {
			g.metrics.ToolChanged(t.Upstream, "approval")
			log.Warn("tool definition changed: its next call asks for approval")
		}
		t.Normalise("definition", nil, what+"; its next call asks a person (security.on_tool_change = \"approve\")")
	default: // warn
		if err := g.store.Pin(id, hash); err != nil {
			g.log.Warn("cannot save the pinned tool definitions", "error", err.Error())
		}
		g.metrics.ToolChanged(t.Upstream, "warned")
		if g.warns.full(t.Upstream, t.Tool.Name) {
			log.Warn("tool definition changed since it was pinned; the new one is pinned (security.on_tool_change = \"warn\")")
		}
		// Logged here, under the upstream's limit (pinlog.go), not once
		// more per listing by the ingest point.
		t.NormaliseLogged("definition", nil, what+"; the new definition is pinned (security.on_tool_change = \"warn\")")
	}
	return nil
}

// changeApproval reports whether a call of e needs a person's yes because
// its definition changed (security.on_tool_change = "approve"): the rule
// text for the approval question and the hash to pin on yes.
func (p *Proxy) changeApproval(e *catalog.Entry) (rule, hash string, ok bool) {
	if p.pins == nil || p.conf().Security.OnToolChange != config.ChangeApprove {
		return "", "", false
	}
	hash, ok = p.pins.store.Pending(e.ID)
	if !ok {
		return "", "", false
	}
	return fmt.Sprintf("security.on_tool_change = \"approve\" (its definition changed since it was pinned; now %s…)", pins.Short(hash)), hash, true
}

// approvedChange pins the definition a person approved at a call.
func (p *Proxy) approvedChange(e *catalog.Entry, hash string) {
	if err := p.pins.store.Pin(e.ID, hash); err != nil {
		p.log.Warn("cannot save the pinned tool definitions", "error", err.Error())
	}
	p.log.Info("changed tool definition approved at a call and pinned", "id", e.ID, "now", pins.Short(hash))
}

// watchApprovals applies `mcp-toolsearch approve` while the proxy runs:
// every approvalPoll it reads the approvals file, and lists the upstream of
// each newly approved tool again so that the tool comes back. It returns
// when ctx ends.
func (p *Proxy) watchApprovals(ctx context.Context) {
	if p.pins == nil || p.pins.store.Path() == "" {
		return
	}
	t := time.NewTicker(approvalPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := p.pins.store.ApplyApprovals()
		if err != nil {
			p.log.Warn("cannot read the approvals", "error", err.Error())
			continue
		}
		relisted := map[string]bool{}
		for _, id := range ids {
			up := p.upstreamOfID(id)
			p.log.Info("changed tool definition approved; listing its upstream again", "id", id, "upstream", up)
			if up == "" || relisted[up] {
				continue
			}
			relisted[up] = true
			if m, err := p.ups.Get(up); err == nil {
				m.Relist(up)
			}
		}
	}
}

// upstreamOfID is the configured upstream whose ids start like id
// ("mcp:<upstream>:"), the longest when names nest; "" when none.
func (p *Proxy) upstreamOfID(id string) string {
	best := ""
	for _, name := range p.ups.Names() {
		if strings.HasPrefix(id, "mcp:"+name+":") && len(name) > len(best) {
			best = name
		}
	}
	return best
}
