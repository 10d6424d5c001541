package front

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// Eliding a stdio client's repeated _meta triple.
//
// At protocol 2026-07-28 a client puts its protocol version, identity and
// capabilities into every request's _meta (SEP-2575). go-sdk v1.8.0
// validates the triple on each request (mcp/shared.go validateRequestMeta):
// it decodes params for _meta, then clientInfo and clientCapabilities each
// by a JSON round trip, and a request with a protocol _meta never takes
// the fast path (stdio_fast.go): elided, a 2026-07-28 call costs 15 KB and
// a third of the CPU less (docs/performance.md). It uses the result
// only to open the session at the connection's first such request (its
// InitializeParams), to tell the request's protocol (resultType and
// serverInfo on the result, a per-request log level) and to check the
// version.
//
// Over stdio one connection is one client. Once the go-sdk has accepted a
// tools/call of this connection (answered it without an error: the triple
// was valid and opened the session), a later tools/call whose triple is
// byte for byte the same gains nothing from validating it again: the front
// takes the three keys out of its _meta before the go-sdk sees it. Such a
// request is then served on the session's own parameters, which are these
// very values: modernRequestOf reads the session, the proxy's middleware
// stamps serverInfo itself, the exchange stamps resultType, and forward
// drops these hop keys anyway (meta.go).
//
// Never elided: a triple that differs in any byte, one with a log level
// (the go-sdk reads it per request), a connection that sent initialize,
// escaped or repeated keys, anything but tools/call. Trust: the client is
// not trusted; what it gains is only the validation it already passed.

import (
	"bytes"
	"encoding/binary"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// elideMeta takes the _meta triple out of tools/call request r when this
// connection's go-sdk session already accepted the same triple, and notes
// the triple of a connection's first such requests until one is accepted
// (accepted). rec (nil: none) is the record of r.Params' members
// (jsonscan.Members, read when it holds them all); when the triple is
// taken out it becomes the record of the new params. metaRec (nil: none)
// is the record of its _meta's.
func (c *Conn) elideMeta(r *jsonrpc.Request, rec, metaRec *jsonscan.Members) {
	if r.Method != "tools/call" || !r.ID.IsValid() {
		return
	}
	restRec := &c.restRec // stdio.go: the reader's own
	restRec.Reset()
	trip, rest, ok := metaTriple(r.Params, rec, metaRec, restRec)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.sawInit:
	case c.trip == nil:
		if len(c.tripPending) < 64 { // bounded: a client may pipeline
			if c.tripPending == nil {
				c.tripPending = map[jsonrpc.ID][]byte{}
			}
			c.tripPending[r.ID] = trip
		}
	case bytes.Equal(trip, c.trip):
		r.Params = rest
		c.elided++
		if rec != nil {
			*rec = *restRec
		}
	}
}

// accepted records the triple of a tools/call the go-sdk answered without
// an error (its validation passed and the session is open).
func (c *Conn) accepted(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	trip, ok := c.tripPending[resp.ID]
	if !ok {
		return
	}
	delete(c.tripPending, resp.ID)
	if resp.Error == nil && c.trip == nil {
		c.trip = trip
		c.tripPending = nil
	}
}

// metaTriple returns the 2026-07-28 triple of params' _meta as one key
// (the raw values of protocolVersion, clientInfo and clientCapabilities,
// each length-prefixed) and params without them (without _meta when
// nothing else is left in it). ok is false when the request must reach
// the go-sdk as it is: no _meta, a version before 2026-07-28, no
// clientCapabilities, a log level, escaped or repeated keys. params'
// members are read from rec when it holds them all
// (jsonscan.Members.Complete; nil: none), else params is scanned, and
// _meta's from metaRec likewise; restRec (nil: none) gets the record of
// rest (the fast path then needs no scan of rest).
func metaTriple(params []byte, rec, metaRec, restRec *jsonscan.Members) (trip, rest []byte, ok bool) {
	// Each object is scanned once (a scan of a 2026-07-28
	// request line costs about as much as the rest of its decoding); the
	// members are kept to rebuild params from, up to len(memberList),
	// past which params and _meta are scanned again.
	var meta []byte
	var seen keySeen
	var top, kept memberList
	bad := false
	if err := EachMember(params, rec, func(k, v []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 || seen.repeat(k) {
			bad = true
			return false
		}
		top.add(k, v)
		if string(k) == "_meta" {
			meta = v
		}
		return true
	}); err != nil || bad || meta == nil {
		return nil, nil, false
	}
	var pv, ci, cc []byte
	seen = keySeen{}
	if err := EachMember(meta, metaRec, func(k, v []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 || seen.repeat(k) {
			bad = true
			return false
		}
		switch string(k) {
		case mcp.MetaKeyProtocolVersion:
			pv = v
		case mcp.MetaKeyClientInfo:
			ci = v
		case mcp.MetaKeyClientCapabilities:
			cc = v
		case mcp.MetaKeyLogLevel:
			bad = true
		default:
			kept.add(k, v)
		}
		return !bad
	}); err != nil || bad || cc == nil || !PlainString(pv) || string(pv[1:len(pv)-1]) < ModernVersion {
		return nil, nil, false
	}
	trip = make([]byte, 0, len(pv)+len(ci)+len(cc)+3*binary.MaxVarintLen32)
	for _, v := range [][]byte{pv, ci, cc} {
		trip = binary.AppendUvarint(trip, uint64(len(v)))
		trip = append(trip, v...)
	}
	out := rawObject{b: make([]byte, 0, len(params))}
	if top.over || kept.over {
		_, _ = jsonscan.Object(params, func(k, v []byte) bool {
			if string(k) != "_meta" {
				out.member(k, v)
			} else if meta := WithoutMetaKeys(v, nil, isTripleKey); meta != nil {
				out.member(k, meta)
			}
			return true
		})
		return trip, out.close(), true
	}
	out.rec = restRec
	var metaOut []byte
	if kept.n > 0 {
		var mo rawObject
		for _, m := range kept.m[:kept.n] {
			mo.member(m[0], m[1])
		}
		metaOut = mo.close()
	}
	for _, m := range top.m[:top.n] {
		if string(m[0]) != "_meta" {
			out.member(m[0], m[1])
		} else if metaOut != nil {
			out.member(m[0], metaOut)
		}
	}
	return trip, out.close(), true
}

// memberList keeps the first members of an object as scanned (raw key,
// raw value); over is set when there were more.
type memberList struct {
	m    [8][2][]byte
	n    int
	over bool
}

func (l *memberList) add(k, v []byte) {
	if l.n == len(l.m) {
		l.over = true
		return
	}
	l.m[l.n] = [2][]byte{k, v}
	l.n++
}

// keySeen finds a repeated member name in one object: the first few names
// are compared in place (no allocation for the usual request), a map
// takes over past them (a client may send any number of keys).
type keySeen struct {
	few [8][]byte
	n   int
	m   map[string]bool
}

// repeat records k and reports whether it was recorded before.
func (s *keySeen) repeat(k []byte) bool {
	if s.m != nil {
		if s.m[string(k)] {
			return true
		}
		s.m[string(k)] = true
		return false
	}
	for _, f := range s.few[:s.n] {
		if bytes.Equal(f, k) {
			return true
		}
	}
	if s.n < len(s.few) {
		s.few[s.n] = k
		s.n++
		return false
	}
	s.m = make(map[string]bool, 2*len(s.few))
	for _, f := range s.few {
		s.m[string(f)] = true
	}
	s.m[string(k)] = true
	return false
}

// isTripleKey reports whether k (raw) is a key of the _meta triple.
func isTripleKey(k []byte) bool {
	switch string(k) {
	case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities:
		return true
	}
	return false
}

// Version is the proxy's version as its serverInfo names it; package
// proxy sets it from its own (which release builds set) before serving.
var Version string

// ModernVersion is the first protocol version without initialize and
// sessions (MCP 2026-07-28, SEP-2575).
const ModernVersion = "2026-07-28"

// ServerImpl is the proxy's identity as an MCP server (initialize's
// serverInfo; on 2026-07-28 every result's _meta serverInfo).
var ServerImpl = sync.OnceValue(func() *mcp.Implementation {
	return &mcp.Implementation{Name: "mcp-toolsearch", Title: "mcp-toolsearch catalog proxy", Version: Version}
})

// serverInfoOnly is the _meta StampServerInfo gives a raw result that had
// none. It is shared by those results and read-only: their readers
// (RawResult.MarshalJSON, the go-sdk's annotateServerInfo and its copy
// annotateServerInfo in http_stateless.go, which change a _meta only when
// it lacks serverInfo) never write to it.
var serverInfoOnly = sync.OnceValue(func() map[string]any { return map[string]any{mcp.MetaKeyServerInfo: ServerImpl()} })

// StampServerInfo puts the proxy's serverInfo into the _meta of a
// tools/call result for a 2026-07-28 client unless it has one, as the
// go-sdk server does for requests whose _meta names that version
// (annotateServerInfo, SEP-2575); a request whose triple the front
// elided does not, so the proxy does it for every such result. The
// result's own _meta map is not modified (it may be the upstream's).
func StampServerInfo(res mcp.Result) {
	if res == nil {
		return
	}
	m := res.GetMeta()
	if _, ok := m[mcp.MetaKeyServerInfo]; ok {
		return
	}
	if r, ok := res.(*RawResult); ok && len(m) == 0 {
		r.SetMeta(serverInfoOnly()) // the usual case: no map per call
		return
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[mcp.MetaKeyServerInfo] = ServerImpl()
	res.SetMeta(out)
}
