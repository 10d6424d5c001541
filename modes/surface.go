package modes

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SurfaceSize is what one mode sends a client before any search: the
// serialized tools/list result and the server instructions.
type SurfaceSize struct {
	Mode              string  `json:"mode"`
	Tools             int     `json:"tools"`             // tools in tools/list
	ToolsListBytes    int     `json:"toolsListBytes"`    // bytes of the JSON tools/list result
	InstructionsBytes int     `json:"instructionsBytes"` // bytes of the instructions text
	TotalBytes        int     `json:"totalBytes"`
	RatioToDirect     float64 `json:"ratioToDirect"` // TotalBytes / direct TotalBytes
	// FirstContactBytes is what a model must read to use the surface:
	// the tools/list result holding only the surface's own tools
	// (tool_search, tool_describe, tool_call or tool_search_code; not the
	// operator's direct-only or pinned tools, nor directory mode's
	// directory text in tool_search's description) plus the
	// instructions. 0 in direct mode, which has no tools of its own.
	FirstContactBytes int `json:"firstContactBytes"`
}

// MeasureSurfaces returns the surface sizes for env's catalog: first
// "direct", the tools as their upstreams sent them under their exposed
// names (the baseline: a plain aggregation, nothing else the proxy adds),
// then "direct+hints", the proxy's direct mode (each tool's search hint in
// _meta), then the tools, directory and code modes.
// RatioToDirect divides by the first. pinned and dirMax configure
// directory mode as in the config.
func MeasureSurfaces(env Env, api API, pinned []string, dirMax int, codeTimeout time.Duration) []SurfaceSize {
	surfaces := []Surface{
		upstreamsDirect{},
		Direct{},
		&Tools{API: api},
		&Tools{API: api, Directory: true, DirectoryMaxChars: dirMax, Pinned: pinned},
		&Code{API: api, Timeout: codeTimeout},
	}
	var out []SurfaceSize
	for _, s := range surfaces {
		tools := s.Tools(env)
		b := wireJSON(&mcp.ListToolsResult{Tools: tools})
		ins := len(s.Instructions(env))
		row := SurfaceSize{Mode: s.Mode(), Tools: len(tools), ToolsListBytes: len(b), InstructionsBytes: ins, TotalBytes: len(b) + ins}
		switch s.(type) {
		case upstreamsDirect:
		case Direct:
			row.Mode = "direct+hints"
		default:
			row.FirstContactBytes = FirstContact(s, env)
		}
		out = append(out, row)
	}
	for i := range out {
		if out[0].TotalBytes > 0 {
			out[i].RatioToDirect = float64(out[i].TotalBytes) / float64(out[0].TotalBytes)
		}
	}
	return out
}

// upstreamsDirect is the baseline of MeasureSurfaces: every allowed tool
// as its upstream sent it, under its exposed name (the prefix that keeps
// the names of several upstreams apart, as a client that aggregates them
// adds its own), with nothing else the proxy adds (no search hint, no
// alwaysLoad).
type upstreamsDirect struct{ Direct }

func (upstreamsDirect) Tools(env Env) []*mcp.Tool {
	es := allowedEntries(env, nil)
	out := make([]*mcp.Tool, 0, len(es))
	for _, e := range es {
		out = append(out, EntryTool(e))
	}
	return out
}

// wireJSON encodes v as a client receives it: without Go's HTML escaping
// of <, > and & (the SDK's encoder does not escape them), no trailing newline.
func wireJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// FirstContact returns the first-contact bytes of surface s for env (see
// SurfaceSize.FirstContactBytes). Directory mode is measured as tools
// mode: its directory is sized by directory_max_chars, the operator's choice.
func FirstContact(s Surface, env Env) int {
	if t, ok := s.(*Tools); ok && t.Directory {
		s = &Tools{API: t.API}
	}
	var own []*mcp.Tool
	for _, t := range s.Tools(env) {
		for _, r := range Reserved {
			if t.Name == r {
				own = append(own, t)
			}
		}
	}
	ins := s.Instructions(env)
	return len(wireJSON(&mcp.ListToolsResult{Tools: own})) + len(ins)
}
