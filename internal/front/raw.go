package front

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// RawResult is a tools/call answer written as the upstream's bytes
// (mcp.ResultBase makes it an mcp.Result; go-sdk documents custom results).
// For a 2026-07-28 client (modern) the bytes get what the decoded way
// gives such a result (eraResult, waitExchange): resultType "complete",
// and the members the go-sdk server puts in the result's _meta after the
// handler (SEP-2575: its serverInfo, through ResultBase.SetMeta) are merged
// into the upstream's _meta without decoding the rest.
type RawResult struct {
	mcp.ResultBase
	json   json.RawMessage
	modern bool
	// spare: json's capacity beyond its length is this result's own (a
	// tool_call answer, ToolCallAnswer), so the stamps may be appended
	// to it in place (stampSpare).
	spare bool
	// answer: json is such an answer: compact, with neither a _meta nor
	// a resultType member (ToolCallAnswer), so it is neither compacted
	// nor scanned again when written.
	answer bool
	// rec: json's members as recorded where it was scanned or built
	// (upstream.RawResult.Members; nil or not Complete(json): unknown),
	// so that stamping needs no scan of its own; metaRec the
	// same for its _meta.
	rec, metaRec *jsonscan.Members
}

// NewRawResult is a tools/call answer written as json, the bytes of a
// result: stamped for a 2026-07-28 client (modern), and, when answer is
// set, an answer the proxy's own tools built (compact, no _meta, no
// resultType; its capacity beyond its length is the answer's own, so the
// stamps may be appended in place).
func NewRawResult(json []byte, modern, answer bool) *RawResult {
	return &RawResult{json: json, modern: modern, spare: answer, answer: answer}
}

// JSON is r's bytes as it holds them (not stamped).
func (r *RawResult) JSON() []byte { return r.json }

// SetRecords gives r the records of its members and of its _meta's
// members (nil: none), as the upstream transport's scan made them.
func (r *RawResult) SetRecords(rec, metaRec *jsonscan.Members) {
	r.rec, r.metaRec = rec, metaRec
}

func (r *RawResult) MarshalJSON() ([]byte, error) {
	if !r.modern && len(r.Meta) == 0 {
		return r.json, nil
	}
	if r.spare {
		r.spare = false // once: the stamps overwrite json's closing brace
		if b, ok := stampSpare(r.json, r.Meta, r.modern, r.answer); ok {
			r.json = b // stamped: stampRaw leaves it as it is
			return b, nil
		}
	}
	return appendStampRaw(nil, r.json, r.rec, r.metaRec, r.Meta, r.modern)
}

// compactInto writes r as encoding/json writes a json.Marshaler (its
// MarshalJSON output compacted, a failure wrapped in a MarshalerError; no
// HTML escaping), the stamped copy made in a pooled buffer instead of a
// new slice.
func (r *RawResult) compactInto(buf *bytes.Buffer) error {
	var b []byte
	var err error
	switch {
	case !r.modern && len(r.Meta) == 0:
		b = r.json
	case r.spare:
		b, err = r.MarshalJSON() // stamped in place
	default:
		b, err = appendStampRaw(nil, r.json, r.rec, r.metaRec, r.Meta, r.modern)
	}
	switch {
	case err != nil:
	case r.answer:
		buf.Write(b) // compact as built (ToolCallAnswer); the stamps are compact too
	default:
		err = compactTo(buf, b)
	}
	if err != nil {
		return &json.MarshalerError{Type: reflect.TypeFor[*RawResult](), Err: err}
	}
	return nil
}

// compactTo is json.Compact(buf, b): the same bytes, and for text that is
// not valid JSON the same error (jsonscan.AppendCompact checks and
// compacts it in one faster pass; json.Compact runs only for what that
// refuses).
func compactTo(buf *bytes.Buffer, b []byte) error {
	if out, ok := jsonscan.AppendCompact(buf.AvailableBuffer(), b); ok {
		buf.Write(out)
		return nil
	}
	return json.Compact(buf, b)
}

// stampSpare is stampRaw for a compact result object b without _meta
// and resultType members, written into b's spare capacity: the stamps
// replace its closing brace and follow its last member, as stampRaw
// appends them (no copy of the result); b itself is no longer
// a whole object then. ok is false for any other b. known: b is known to
// be such an object (a ToolCallAnswer answer), so it is not scanned to
// find out (~19k instructions per tool_call).
func stampSpare(b []byte, extra map[string]any, complete, known bool) (out []byte, ok bool) {
	if len(b) < 3 || b[len(b)-1] != '}' {
		return nil, false
	}
	if !known && !lacksStamps(b) {
		return nil, false
	}
	out = b[:len(b)-1]
	if len(extra) > 0 {
		meta, err := mergeMeta([]byte(`{}`), extra)
		if err != nil {
			return nil, false
		}
		out = append(append(out, `,"_meta":`...), meta...)
	}
	if complete {
		out = append(out, `,"resultType":"complete"`...)
	}
	return append(out, '}'), true
}

// lacksStamps reports whether b is a well-formed object with neither a
// _meta nor a resultType member (stampSpare may then append both).
func lacksStamps(b []byte) bool {
	clean := true
	_, err := jsonscan.Object(b, func(k, _ []byte) bool {
		clean = string(k) != "_meta" && string(k) != "resultType"
		return clean
	})
	return err == nil && clean
}

// stampRaw returns the result object b with the members of extra added to
// its _meta (a key b's _meta already has keeps b's value, as the go-sdk's
// annotateServerInfo does), and with resultType "complete" when complete
// (MCP 2026-07-28, SEP-2322: every tools/call result names its type). b
// is a shaped raw result (ShapeRaw: no resultType of its own; one that
// is there anyway is replaced). Only b's top level and its _meta are
// scanned; every other member is copied as it is.
func stampRaw(b []byte, extra map[string]any, complete bool) ([]byte, error) {
	return appendStampRaw(nil, b, nil, nil, extra, complete)
}

// appendStampRaw is stampRaw appending to dst (which must not overlap b).
// b is scanned once, the merged _meta written in place (the
// scan that found _meta first, to size the output, and the merged
// _meta's own buffer are gone; compactInto's buffer is pooled). Errors
// are stampRaw's: b's own malformation first, then _meta's. b's members
// are read from rec when it holds them all for b (jsonscan.Members: b was
// then scanned whole and well-formed), else b is scanned; its _meta's
// from metaRec likewise.
func appendStampRaw(dst, b []byte, rec, metaRec *jsonscan.Members, extra map[string]any, complete bool) ([]byte, error) {
	out := rawObject{b: slices.Grow(dst, len(b)+len(`,"_meta":{},"resultType":"complete"}`)+160*len(extra))}
	metaSeen := false
	var metaErr error
	if err := EachMember(b, rec, func(k, v []byte) bool {
		if metaErr != nil {
			return true // b is still checked whole: its own error comes first
		}
		switch string(k) {
		case "resultType":
			if complete {
				return true
			}
		case "_meta":
			metaSeen = true
			out.key(k)
			out.b, metaErr = appendMergeMeta(out.b, v, metaRec, extra)
			return true
		}
		out.member(k, v)
		return true
	}); err != nil {
		return nil, fmt.Errorf("raw tools/call result: %w", err)
	}
	if metaErr != nil {
		return nil, metaErr
	}
	if !metaSeen && len(extra) > 0 {
		out.key([]byte("_meta"))
		var err error
		if out.b, err = appendMergeMeta(out.b, []byte(`{}`), nil, extra); err != nil {
			return nil, err
		}
	}
	if complete {
		out.member([]byte("resultType"), []byte(`"complete"`))
	}
	return out.close(), nil
}

// mergeMeta returns the _meta object meta with the members of extra whose
// keys meta lacks (in key order).
func mergeMeta(meta []byte, extra map[string]any) ([]byte, error) {
	return appendMergeMeta(make([]byte, 0, len(meta)+160*len(extra)), meta, nil, extra)
}

// appendMergeMeta is mergeMeta appending to dst; meta's members are read
// from rec when it holds them all (nil: none), else meta is scanned.
func appendMergeMeta(dst, meta []byte, rec *jsonscan.Members, extra map[string]any) ([]byte, error) {
	out := rawObject{b: dst}
	var have map[string]bool
	// The proxy's own serverInfo alone (every result of a 2026-07-28
	// client): whether meta has the key is all that is asked of it, so
	// no key is made a string.
	si, siOnly := extra[mcp.MetaKeyServerInfo].(*mcp.Implementation)
	siOnly = siOnly && len(extra) == 1 && si == ServerImpl()
	haveSI := false
	err := EachMember(meta, rec, func(k, v []byte) bool {
		switch {
		case siOnly:
			haveSI = haveSI || RawKeyIs(k, mcp.MetaKeyServerInfo)
		case len(extra) > 0:
			if have == nil {
				have = map[string]bool{}
			}
			have[RawKey(k)] = true
		}
		out.member(k, v)
		return true
	})
	if err != nil {
		return dst, fmt.Errorf("raw tools/call result: _meta: %w", err)
	}
	if siOnly {
		// Marshalled once, no key list; the upstream's own
		// member, when it sent one, stays.
		if !haveSI {
			si := serverInfoMember()
			out.member(si.key, si.val)
		}
		return out.close(), nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !have[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := extra[k].(*mcp.Implementation); ok && k == mcp.MetaKeyServerInfo && v == ServerImpl() {
			// The proxy's own serverInfo, stamped on every result of a
			// 2026-07-28 client: marshalled once.
			si := serverInfoMember()
			out.member(si.key, si.val)
			continue
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return dst, err
		}
		vb, err := json.Marshal(extra[k])
		if err != nil {
			return dst, fmt.Errorf("raw tools/call result: _meta %q: %w", k, err)
		}
		out.member(kb[1:len(kb)-1], vb)
	}
	return out.close(), nil
}

// serverInfoMember is the _meta member serverInfo: ServerImpl() as
// mergeMeta writes it (the key between its quotes, the value marshalled).
var serverInfoMember = sync.OnceValue(func() struct{ key, val []byte } {
	kb, _ := json.Marshal(mcp.MetaKeyServerInfo)
	vb, _ := json.Marshal(ServerImpl())
	return struct{ key, val []byte }{kb[1 : len(kb)-1], vb}
})

// rawObject builds a JSON object from raw members.
type rawObject struct {
	b []byte
	n int
	// rec (nil: none) records the members written by member; close
	// makes it the record of the object built.
	rec  *jsonscan.Members
	base int // the object's first byte in b
}

// member appends the member k: v; k is the name as raw JSON between its
// quotes (escapes kept), v a raw JSON value.
func (o *rawObject) member(k, v []byte) {
	o.key(k)
	v0 := len(o.b)
	o.b = append(o.b, v...)
	if o.rec != nil {
		o.rec.Add(v0-2-len(k)-o.base, v0-2-o.base, v0-o.base, len(o.b)-o.base)
	}
}

// key appends the name of the next member, k, and its colon; the caller
// appends its value.
func (o *rawObject) key(k []byte) {
	if o.n == 0 {
		o.base = len(o.b)
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// close ends the object and returns it.
func (o *rawObject) close() []byte {
	if o.n == 0 {
		o.base = len(o.b)
		o.b = append(o.b, '{', '}')
	} else {
		o.b = append(o.b, '}')
	}
	if o.rec != nil {
		o.rec.Done(o.b[o.base:])
	}
	return o.b
}

// ShapeRaw gives a raw result the shape the decoded way gives it
// (callRounds, eraResult) for a client before 2026-07-28: no resultType,
// and no hop keys in _meta (meta.go: the upstream's serverInfo never
// passes); an empty _meta is dropped. A result that needs no change is
// returned as is (no copy). Guards against: an upstream (untrusted)
// leaking its identity or protocol members to the client.
func ShapeRaw(b []byte) []byte { return ShapeRawRec(b, nil, nil) }

// ShapeRawRec is ShapeRaw reading b's members from rec when it holds them
// all for b (jsonscan.Members.Complete), else scanning b (the
// transport's one scan of the frame recorded them), and its _meta's from
// metaRec likewise. When it returns a new object, rec (non-nil) is made
// the record of that object.
func ShapeRawRec(b []byte, rec, metaRec *jsonscan.Members) []byte {
	var in *jsonscan.Members
	if rec != nil && rec.Complete(b) {
		c := *rec // rec is rewritten below while in is read
		in = &c
	}
	change := false
	_ = EachMember(b, in, func(k, v []byte) bool {
		switch string(k) {
		case "resultType":
			change = true
		case "_meta":
			_ = EachMember(v, metaRec, func(mk, _ []byte) bool {
				change = change || IsHopMetaRaw(mk)
				return !change
			})
		}
		return !change
	})
	if !change {
		return b
	}
	out := rawObject{b: make([]byte, 0, len(b))}
	if in != nil {
		out.rec = rec
		rec.Reset()
	}
	_ = EachMember(b, in, func(k, v []byte) bool {
		switch string(k) {
		case "resultType":
		case "_meta":
			if meta := WithoutMetaKeys(v, metaRec, IsHopMetaRaw); meta != nil {
				out.member(k, meta)
			}
		default:
			out.member(k, v)
		}
		return true
	})
	return out.close()
}

// EachMember calls fn for b's members as jsonscan.Object does, from rec
// when it holds them all for b (b was scanned whole and well-formed: the
// error is nil), else by scanning b.
func EachMember(b []byte, rec *jsonscan.Members, fn func(k, v []byte) bool) error {
	if rec != nil && rec.Complete(b) {
		for i := 0; i < rec.Len() && fn(rec.At(b, i)); i++ {
		}
		return nil
	}
	_, err := jsonscan.Object(b, fn)
	return err
}

// WithoutMetaKeys is the object meta without the members whose raw names
// drop reports; nil when no member is left. meta's members are read from
// rec when it holds them all (nil: none), else meta is scanned.
func WithoutMetaKeys(meta []byte, rec *jsonscan.Members, drop func(k []byte) bool) []byte {
	var out rawObject
	_ = EachMember(meta, rec, func(k, v []byte) bool {
		if !drop(k) {
			out.member(k, v)
		}
		return true
	})
	if out.n == 0 {
		return nil
	}
	return out.close()
}

// RawKeyIs reports whether RawKey(k) is name, without a string for a key
// without escapes.
func RawKeyIs(k []byte, name string) bool {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k) == name
	}
	return RawKey(k) == name
}

// IsHopMetaRaw is IsHopMetaKey(RawKey(k)), without a string for a key
// without escapes.
func IsHopMetaRaw(k []byte) bool {
	if bytes.IndexByte(k, '\\') >= 0 {
		return IsHopMetaKey(RawKey(k))
	}
	for _, h := range hopMetaKeys {
		if string(k) == h {
			return true
		}
	}
	return false
}

// RawKey is a member name as raw JSON bytes (between the quotes) decoded
// to a string; escapes are rare and decoded the slow way.
func RawKey(k []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &s) != nil {
		return string(k)
	}
	return s
}
