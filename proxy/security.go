package proxy

import "github.com/mcp-toolsearch/mcp-toolsearch/ingest"

// hiddenTools counts the tools of a listing's diagnostics that the
// hidden-characters step stripped or quarantined.
func hiddenTools(ds []ingest.Diagnostic) int {
	tools := map[string]bool{}
	for _, d := range ds {
		if d.Step == ingest.StepHidden {
			tools[d.Tool] = true
		}
	}
	return len(tools)
}
