package front

import (
	"encoding/json"

	sjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientNameOf is the name in a request's raw _meta clientInfo ("" when
// it does not decode), decoded as go-sdk v1.8.0 decodes it for the
// request's session (internal/json: segmentio/encoding with
// DontMatchCaseInsensitiveStructFields), so the check and the call see the
// same client. encoding/json matches keys without case: with
// {"name":"good","NAME":"evil"} the check saw "evil" and the session
// "good". Trust: clientInfo is client-declared.
func ClientNameOf(clientInfo json.RawMessage) string {
	var ci mcp.Implementation
	if _, err := sjson.Parse(clientInfo, &ci, sjson.DontMatchCaseInsensitiveStructFields); err == nil {
		return ci.Name
	}
	return ""
}
