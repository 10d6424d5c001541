package proxy

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
)

// ingestSteps are the steps of THE tool-ingest point (package ingest),
// in the order they run, after the built-in decode step. Every tool of
// every upstream listing (shared and per-client sessions, first listings
// and re-listings) passes them before it reaches the catalog. To add a
// step (a check, a normalisation, a quarantine rule), implement
// ingest.Step and put it here at its place in the order; its diagnostics
// then show in `list`, `check`, the log and the metrics without more work.
func ingestSteps(cfg *config.Config, pins *pinGuard) []ingest.Step {
	var steps []ingest.Step
	if pins != nil {
		// Pinning first: the definition as received.
		steps = append(steps, pins.step(cfg))
	}
	return append(steps,
		// Hidden characters before the schema step, so that no later step
		// keeps them in an original that describe shows.
		ingest.HiddenChars{Block: cfg.Security.HiddenCharacters == config.HiddenBlock},
		ingest.SchemaShape{}, // root "type":"object" for strict clients
		// Last: it also bounds the originals the steps before kept
		//.
		ingest.SizeBound{Max: cfg.Security.MaxToolBytes},
	)
}

// entriesFromListing turns a listing into catalog entries; a tool whose
// inputSchema the pipeline normalised keeps the schema as received in
// OriginalInputSchema (describe shows both); extra is the listing's
// ingest.Result.Extra (members mcp.Tool does not carry, by tool name).
func entriesFromListing(tools []*mcp.Tool, diags []ingest.Diagnostic, extra map[string]json.RawMessage) []*catalog.Entry {
	var originals map[string]json.RawMessage
	for _, d := range diags {
		if d.Action == ingest.Normalised && d.Field == "inputSchema" {
			if originals == nil {
				originals = map[string]json.RawMessage{}
			}
			o := d.Original
			if len(o) == 0 {
				o = json.RawMessage("null") // absent as received
			}
			originals[d.Tool] = o
		}
	}
	es := make([]*catalog.Entry, 0, len(tools))
	for _, t := range tools {
		e := entryFromTool(t)
		e.OriginalInputSchema = originals[t.Name]
		e.Extra = extra[t.Name]
		es = append(es, e)
	}
	return es
}

// IngestDiagnostics are the ingest pipeline's decisions on the last
// listing of each upstream, in upstream name order (for `list` and
// `check`).
func (p *Proxy) IngestDiagnostics() []ingest.Diagnostic {
	var out []ingest.Diagnostic
	for _, st := range p.ups.Statuses() {
		out = append(out, st.Diagnostics...)
	}
	return out
}

// maxNameLen is the longest exposed name: 64 minus
// server.client_prefix_room.
func maxNameLen(cfg *config.Config) int {
	return catalog.MaxNameLen - cfg.Server.ClientPrefixRoom
}

// logShortenedNames logs, once per tool and name, every exposed name of
// upstream that was cut to fit the name length (with its original), so an
// operator can find "billing-cost-management-mcp-server__free-tier-usage"
// behind its shortened name.
func (p *Proxy) logShortenedNames(upstream string) {
	limit := maxNameLen(p.conf())
	for _, e := range p.catalog().Snapshot().Entries {
		if e.Upstream != upstream || len(e.Base) <= limit {
			continue
		}
		if prev, ok := p.shortened.Load(e.ID); ok && prev == e.Exposed {
			continue
		}
		p.shortened.Store(e.ID, e.Exposed)
		p.log.Info("tool name shortened to fit", "upstream", upstream, "tool", e.Name, "full", e.Base, "exposed", e.Exposed, "max", limit, "client_prefix_room", p.conf().Server.ClientPrefixRoom)
	}
}
