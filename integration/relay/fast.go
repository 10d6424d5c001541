package main

import (
	"bytes"
	"io"
	"net/url"

	"github.com/valyala/fasthttp"
)

// fastHTTP serves listen with a fasthttp.Server whose handler forwards
// every request (method, body, all headers but the hop-by-hop ones of RFC
// 9110 section 7.6.1) to target's URL with a fasthttp.HostClient (64
// connections at most) and copies the answer's status and headers back. A
// server-sent event stream (Content-Type text/event-stream, MCP
// 2025-11-25 "Streamable HTTP") flows chunk by chunk, each chunk flushed as
// it is read; any other answer body is copied whole.
func fastHTTP(listen string, target *url.URL) error {
	hc := &fasthttp.HostClient{
		Addr:               target.Host,
		IsTLS:              target.Scheme == "https",
		MaxConns:           64,
		StreamResponseBody: true,
	}
	uri := target.String()
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			req := &ctx.Request
			req.SetRequestURI(uri)
			req.Header.SetHost(target.Host)
			for _, h := range hopHeaders {
				req.Header.Del(h)
			}
			resp := fasthttp.AcquireResponse()
			if err := hc.Do(req, resp); err != nil {
				fasthttp.ReleaseResponse(resp)
				ctx.Error("relay: upstream: "+err.Error(), fasthttp.StatusBadGateway)
				return
			}
			resp.Header.CopyTo(&ctx.Response.Header)
			for _, h := range hopHeaders {
				ctx.Response.Header.Del(h)
			}
			if bytes.HasPrefix(resp.Header.ContentType(), []byte("text/event-stream")) {
				// Chunked, flushed after every read; the upstream's answer
				// is released once the server has written it all.
				ctx.Response.SetBodyStream(&upstreamBody{resp}, -1)
				return
			}
			_, err := io.Copy(ctx.Response.BodyWriter(), resp.BodyStream())
			resp.CloseBodyStream()
			fasthttp.ReleaseResponse(resp)
			if err != nil {
				ctx.Error("relay: upstream body: "+err.Error(), fasthttp.StatusBadGateway)
			}
		},
	}
	return s.ListenAndServe(listen)
}

// upstreamBody is an upstream answer's streamed body; Close ends the
// stream and returns the answer to fasthttp's pool.
type upstreamBody struct{ resp *fasthttp.Response }

func (u *upstreamBody) Read(p []byte) (int, error) { return u.resp.BodyStream().Read(p) }

func (u *upstreamBody) Close() error {
	err := u.resp.CloseBodyStream()
	fasthttp.ReleaseResponse(u.resp)
	return err
}
