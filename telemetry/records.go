package telemetry

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Event names: the "event" field of a session-log record.
const (
	EventSessionStart = "session_start"
	EventToolsList    = "tools_list"
	EventInstructions = "instructions"
	EventCatalog      = "catalog"
	EventSearch       = "search"
	EventDescribe     = "describe"
	EventCall         = "call"
	EventCodeRun      = "code_run"
	EventSessionEnd   = "session_end"
)

// Bounds on what one record may carry, so that a client or model cannot make
// the log grow without limit through one field.
const (
	maxStringLen  = 256  // ids, upstream, client name/version, endpoint (bytes)
	maxQueryLen   = 2000 // search query text, when logArguments (bytes)
	maxArgsLen    = 64 << 10
	MaxFinalCalls = 1000 // finalCalls kept in a Summary; later ones are counted in FinalCallsDropped
)

// header is the part every record shares.
type header struct {
	TS      time.Time `json:"ts"` // RFC 3339 with nanoseconds, UTC
	Session string    `json:"session"`
	// Client is the session's clientInfo.name, on every record so that a
	// line read alone says whose it is.
	Client string `json:"client,omitempty"`
	Event  string `json:"event"`
}

type startRecord struct {
	header
	Client        string `json:"client"`
	ClientVersion string `json:"clientVersion"`
	Transport     string `json:"transport"`
	Endpoint      string `json:"endpoint"`
	Mode          string `json:"mode"`
}

type toolsListRecord struct {
	header
	Bytes       int `json:"bytes"`
	ToolCount   int `json:"toolCount"`
	SchemaCount int `json:"schemaCount"`
}

type instructionsRecord struct {
	header
	Bytes int `json:"bytes"`
}

type catalogRecord struct {
	header
	CatalogSummary
}

type searchRecord struct {
	header
	Mode      string `json:"mode"`
	Hits      int    `json:"hits"`
	ViaBridge bool   `json:"viaBridge"`
	Query     string `json:"query,omitempty"` // only when logArguments
}

type describeRecord struct {
	header
	Mode      string `json:"mode"`
	ID        string `json:"id"`
	Found     bool   `json:"found"`
	ViaBridge bool   `json:"viaBridge"`
}

type callRecord struct {
	header
	ID          string          `json:"id"`
	Upstream    string          `json:"upstream"`
	Trusted     bool            `json:"trusted"`
	Mode        string          `json:"mode"`
	ViaBridge   bool            `json:"viaBridge"`
	DurationMs  float64         `json:"durationMs"`
	Outcome     string          `json:"outcome"`
	BytesIn     int             `json:"bytesIn"`
	BytesOut    int             `json:"bytesOut"`
	Rule        string          `json:"rule,omitempty"`        // outcome "denied": the policy rule that decided
	Args        json.RawMessage `json:"args,omitempty"`        // only when logArguments
	ArgsOmitted string          `json:"argsOmitted,omitempty"` // why Args is absent although logArguments
}

type codeRunRecord struct {
	header
	DurationMs    float64 `json:"durationMs"`
	OK            bool    `json:"ok"`
	TimedOut      bool    `json:"timedOut"`
	SearchCount   int     `json:"searchCount"`
	DescribeCount int     `json:"describeCount"`
	CallCount     int     `json:"callCount"`
}

type endRecord struct {
	header
	Summary Summary `json:"summary"`
}

// CatalogSummary is the catalog a session was offered (SPEC §7: catalog size
// and breakdown by source): tool counts in total, per upstream name, and by
// trust (Trusted+Untrusted == Total).
type CatalogSummary struct {
	Total      int            `json:"total"`
	ByUpstream map[string]int `json:"byUpstream"`
	Trusted    int            `json:"trusted"`
	Untrusted  int            `json:"untrusted"`
}

// FinalCall is one tool call executed (or refused) through the proxy, as kept
// in a Summary: which tool, from which upstream, whether that upstream is
// trusted, and the outcome (one of the Outcome* constants).
type FinalCall struct {
	ID        string `json:"id"`
	Upstream  string `json:"upstream"`
	Trusted   bool   `json:"trusted"`
	Outcome   string `json:"outcome"`
	Mode      string `json:"mode,omitempty"`
	ViaBridge bool   `json:"viaBridge,omitempty"`
}

// Summary is the totals of one session: the body of the session_end record,
// and what Stats reconstructs from the events of a session that has none.
// Byte counts are bytes of serialized JSON as sent on the wire (without
// transport framing); durations are milliseconds.
type Summary struct {
	Client        string  `json:"client"`
	ClientVersion string  `json:"clientVersion,omitempty"`
	Transport     string  `json:"transport,omitempty"`
	Endpoint      string  `json:"endpoint,omitempty"`
	Mode          string  `json:"mode"`
	DurationMs    float64 `json:"durationMs"` // session_start to the last event (or session_end)

	// tools/list results sent to the client (SPEC §7: what the model saw first).
	ToolsListCount      int `json:"toolsListCount"`
	ToolsListBytesLast  int `json:"toolsListBytesLast"`
	ToolsListBytesTotal int `json:"toolsListBytesTotal"`
	ToolsSeenFirst      int `json:"toolsSeenFirst"`   // tool count of the first tools/list
	SchemasSeenFirst    int `json:"schemasSeenFirst"` // full input schemas in the first tools/list
	InstructionsBytes   int `json:"instructionsBytes"`

	Catalog *CatalogSummary `json:"catalog,omitempty"` // the last catalog reported

	SearchCount         int            `json:"searchCount"`
	SearchBridgeCount   int            `json:"searchBridgeCount"`
	DescribeCount       int            `json:"describeCount"`
	DescribeBridgeCount int            `json:"describeBridgeCount"`
	CallCount           int            `json:"callCount"` // all calls, bridge calls included
	CallsByMode         map[string]int `json:"callsByMode"`
	BridgeCallCount     int            `json:"bridgeCallCount"` // the part of CallCount made from code runs
	CallsByOutcome      map[string]int `json:"callsByOutcome"`
	CodeRunCount        int            `json:"codeRunCount"`
	CodeRunErrors       int            `json:"codeRunErrors"`   // runs that did not succeed, timeouts included
	CodeRunTimeouts     int            `json:"codeRunTimeouts"` // runs killed by the wall-clock timeout

	FinalCalls        []FinalCall `json:"finalCalls"`
	FinalCallsDropped int         `json:"finalCallsDropped,omitempty"` // calls beyond MaxFinalCalls
	BytesIn           int         `json:"bytesIn"`                     // call arguments received from the client
	BytesOut          int         `json:"bytesOut"`                    // call results returned to the client

	start time.Time // session_start timestamp, for DurationMs
}

// The add* methods fold one record into the summary. Session uses them as it
// writes, and Stats uses them when it reads a log, so a crashed session's
// reconstructed summary equals what End would have written.

func (s *Summary) touch(ts time.Time) {
	if s.start.IsZero() || ts.IsZero() {
		return
	}
	if d := float64(ts.Sub(s.start).Microseconds()) / 1000; d > s.DurationMs {
		s.DurationMs = d
	}
}

func (s *Summary) addStart(r *startRecord) {
	s.Client, s.ClientVersion, s.Transport, s.Endpoint, s.Mode = r.Client, r.ClientVersion, r.Transport, r.Endpoint, r.Mode
	s.start = r.TS
}

func (s *Summary) addToolsList(r *toolsListRecord) {
	if s.ToolsListCount == 0 {
		s.ToolsSeenFirst, s.SchemasSeenFirst = r.ToolCount, r.SchemaCount
	}
	s.ToolsListCount++
	s.ToolsListBytesLast = r.Bytes
	s.ToolsListBytesTotal += r.Bytes
	s.touch(r.TS)
}

func (s *Summary) addInstructions(r *instructionsRecord) {
	s.InstructionsBytes += r.Bytes
	s.touch(r.TS)
}

func (s *Summary) addCatalog(r *catalogRecord) {
	c := r.CatalogSummary
	c.ByUpstream = copyCounts(c.ByUpstream)
	s.Catalog = &c
	s.touch(r.TS)
}

func (s *Summary) addSearch(r *searchRecord) {
	s.SearchCount++
	if r.ViaBridge {
		s.SearchBridgeCount++
	}
	s.touch(r.TS)
}

func (s *Summary) addDescribe(r *describeRecord) {
	s.DescribeCount++
	if r.ViaBridge {
		s.DescribeBridgeCount++
	}
	s.touch(r.TS)
}

func (s *Summary) addCall(r *callRecord) {
	s.CallCount++
	if s.CallsByMode == nil {
		s.CallsByMode = map[string]int{}
	}
	s.CallsByMode[r.Mode]++
	if r.ViaBridge {
		s.BridgeCallCount++
	}
	if s.CallsByOutcome == nil {
		s.CallsByOutcome = map[string]int{}
	}
	s.CallsByOutcome[r.Outcome]++
	if len(s.FinalCalls) < MaxFinalCalls {
		s.FinalCalls = append(s.FinalCalls, FinalCall{ID: r.ID, Upstream: r.Upstream, Trusted: r.Trusted,
			Outcome: r.Outcome, Mode: r.Mode, ViaBridge: r.ViaBridge})
	} else {
		s.FinalCallsDropped++
	}
	s.BytesIn += r.BytesIn
	s.BytesOut += r.BytesOut
	s.touch(r.TS)
}

func (s *Summary) addCodeRun(r *codeRunRecord) {
	s.CodeRunCount++
	if !r.OK {
		s.CodeRunErrors++
	}
	if r.TimedOut {
		s.CodeRunTimeouts++
	}
	s.touch(r.TS)
}

// clone returns a deep copy (maps and slices are not shared).
func (s *Summary) clone() Summary {
	c := *s
	c.CallsByMode = copyCounts(s.CallsByMode)
	c.CallsByOutcome = copyCounts(s.CallsByOutcome)
	c.FinalCalls = append([]FinalCall(nil), s.FinalCalls...)
	if s.Catalog != nil {
		cat := *s.Catalog
		cat.ByUpstream = copyCounts(s.Catalog.ByUpstream)
		c.Catalog = &cat
	}
	return c
}

// normalize makes empty maps and slices encode as {} and [] rather than null.
func (s *Summary) normalize() {
	if s.CallsByMode == nil {
		s.CallsByMode = map[string]int{}
	}
	if s.CallsByOutcome == nil {
		s.CallsByOutcome = map[string]int{}
	}
	if s.FinalCalls == nil {
		s.FinalCalls = []FinalCall{}
	}
}

func copyCounts(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// truncate cuts s to at most n bytes on a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
