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
}

// MeasureSurfaces returns the surface sizes of the direct, tools,
// directory and code modes for env's catalog, direct first. pinned and
// dirMax configure directory mode as in the config.
func MeasureSurfaces(env Env, api API, pinned []string, dirMax int, codeTimeout time.Duration) []SurfaceSize {
	surfaces := []Surface{
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
		out = append(out, SurfaceSize{Mode: s.Mode(), Tools: len(tools), ToolsListBytes: len(b), InstructionsBytes: ins, TotalBytes: len(b) + ins})
	}
	for i := range out {
		if out[0].TotalBytes > 0 {
			out[i].RatioToDirect = float64(out[i].TotalBytes) / float64(out[0].TotalBytes)
		}
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
