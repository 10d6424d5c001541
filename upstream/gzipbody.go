package upstream

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
)

// Compressed answers of HTTP upstreams. net/http's transport asks for gzip
// itself when a request has no Accept-Encoding, and then decompresses the
// answer; but it keeps that header in a map of its own per request (issue
// 16: ~0.4 KB per call). The Streamable HTTP POSTs (httpconn.go) ask for it
// themselves, so the transport leaves the answer as it came, and
// headerRoundTripper decompresses it here, as transport.go does for its own
// request: the body is read through gzip, and Content-Encoding and
// Content-Length are removed (they describe the compressed body).

// askedGzip reports whether req asked for gzip only (the POSTs' own
// header, or one the configuration set to the same value).
func askedGzip(req *http.Request) bool {
	v := req.Header["Accept-Encoding"]
	return len(v) == 1 && strings.EqualFold(strings.TrimSpace(v[0]), "gzip")
}

// gunzipAnswer makes resp's body read decompressed when its request asked
// for gzip (askedGzip) and the upstream answered with it. Called once per
// response, before anyone reads it.
func gunzipAnswer(req *http.Request, resp *http.Response) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody || !askedGzip(req) ||
		!strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return
	}
	resp.Body = &gzipBody{body: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
}

// gzipBody reads a gzip-compressed body decompressed. The gzip reader is
// made on the first Read (reading the gzip header waits for the body);
// Read is called from one goroutine at a time, Close may come from
// another (it closes the body, which ends a Read in progress).
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error // of the gzip header, kept
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		if g.err == nil {
			g.zr, g.err = gzip.NewReader(g.body)
		}
		if g.err != nil {
			return 0, g.err
		}
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }
