// Command relay is the overhead bench's floor: the
// least a proxy can do between an MCP client and its upstream, with no MCP
// logic at all, so that BenchmarkOverhead (OVERHEAD_RELAY=1) can show how
// much of the proxy's added cost any proxy pays on the machine at hand.
// It is a bench instrument, not part of mcp-toolsearch, and a Go module of
// its own (integration/relay/go.mod): fasthttp, which only http-fast uses,
// stays out of the product's go.mod and build (the bench builds it in this
// folder: goBinary).
//
//	relay stdio -- COMMAND [ARG...]
//	relay http -listen HOST:PORT -upstream URL
//	relay http-copy -listen HOST:PORT -upstream URL
//	relay http-fast -listen HOST:PORT -upstream URL
//	relay tcp -listen HOST:PORT -upstream URL
//
// stdio starts COMMAND and copies lines both ways, unparsed: its own stdin
// to the child's stdin and the child's stdout to its own stdout, one
// goroutine per direction, one write per line (the child's stderr goes to
// its own stderr). It exits when the child exits or its stdin ends (then
// the child's stdin is closed and the child's exit awaited).
//
// http forwards every request, whatever its path, to URL with
// net/http/httputil.ReverseProxy (FlushInterval -1, so server-sent event
// streams flow as they are written; headers such as Mcp-Session-Id are
// kept; hop-by-hop headers are dropped as RFC 9110 section 7.6.1 says).
//
// http-copy does what a proxy's HTTP front minimally must: it reads the
// request body whole (a pooled buffer), POSTs (or GETs, DELETEs) it to URL
// with a pooled client, and copies the answer's status, headers and body
// back, flushing after every read so that event streams flow.
//
// http-fast is http-copy built on github.com/valyala/fasthttp instead of
// net/http (a fasthttp.Server, a fasthttp.HostClient to URL; fast.go): is
// net/http the floor of an HTTP front, or would another HTTP stack add less?
//
// tcp copies bytes: for each connection accepted it dials URL's host and
// copies both ways until either side closes (no HTTP parsing at all: the
// floor of one more network hop; on Linux io.Copy between TCP connections
// splices in the kernel).
//
// The net/http modes keep 64 idle connections to the upstream (net/http's
// default of 2 would make most of 16 concurrent calls redial).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"sync"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch mode := os.Args[1]; mode {
	case "stdio":
		args := os.Args[2:]
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 {
			usage()
		}
		if err := stdio(args); err != nil {
			log.Fatalf("relay stdio: %v", err)
		}
	case "http", "http-copy", "http-fast", "tcp":
		fs := flag.NewFlagSet(mode, flag.ExitOnError)
		listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
		upstream := fs.String("upstream", "", "URL every request goes to")
		fs.Parse(os.Args[2:])
		target, err := url.Parse(*upstream)
		if err != nil || target.Host == "" {
			log.Fatalf("relay %s: -upstream %q: not an absolute URL (%v)", mode, *upstream, err)
		}
		switch mode {
		case "tcp":
			log.Fatal(tcp(*listen, target.Host))
		case "http-fast":
			log.Fatal(fastHTTP(*listen, target))
		}
		h := reverseProxy(target)
		if mode == "http-copy" {
			h = copyHandler(target)
		}
		log.Fatal((&http.Server{Addr: *listen, Handler: h}).ListenAndServe())
	default:
		usage()
	}
}

// tcp accepts connections on listen and copies each both ways to a new
// connection to upstream (HOST:PORT).
func tcp(listen, upstream string) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				log.Printf("relay tcp: %v", err)
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() {
				io.Copy(u, c)
				u.(*net.TCPConn).CloseWrite()
				close(done)
			}()
			io.Copy(c, u)
			c.(*net.TCPConn).CloseWrite()
			<-done
		}()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: relay stdio -- COMMAND [ARG...] | relay http|http-copy|http-fast|tcp -listen HOST:PORT -upstream URL")
	os.Exit(2)
}

// stdio runs the child cmd and copies lines both ways until either side
// ends.
func stdio(cmd []string) error {
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		return err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	go func() {
		copyLines(in, os.Stdin)
		in.Close() // the client is gone: the child sees end of input
	}()
	copyLines(os.Stdout, out) // returns when the child's stdout ends
	return c.Wait()
}

// copyLines writes each line read from r to w with one write, unparsed,
// until r ends or a write fails. A line longer than the reader's buffer
// goes out in buffer-sized pieces.
func copyLines(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}

// reverseProxy sends every request to target's URL (path and query
// included, whatever the request's path).
func reverseProxy(target *url.URL) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *target
			pr.Out.URL = &u
			pr.Out.Host = ""
		},
		FlushInterval: -1,
		Transport:     upstreamTransport(),
	}
}

// hopHeaders are the connection-specific headers a proxy must not forward
// (RFC 9110 section 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// copyHandler reads the body whole, re-sends it to target with a pooled
// client and copies the answer back.
func copyHandler(target *url.URL) http.Handler {
	client := &http.Client{Transport: upstreamTransport()}
	bufs := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	chunks := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	u := target.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bufs.Get().(*bytes.Buffer)
		body.Reset()
		defer bufs.Put(body)
		if _, err := body.ReadFrom(r.Body); err != nil {
			http.Error(w, "relay: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, u, bytes.NewReader(body.Bytes()))
		if err != nil {
			http.Error(w, "relay: "+err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		for _, h := range hopHeaders {
			req.Header.Del(h)
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, "relay: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		for _, h := range hopHeaders {
			w.Header().Del(h)
		}
		w.WriteHeader(resp.StatusCode)
		f, _ := w.(http.Flusher)
		chunk := chunks.Get().(*[]byte)
		defer chunks.Put(chunk)
		for {
			n, err := resp.Body.Read(*chunk)
			if n > 0 {
				if _, werr := w.Write((*chunk)[:n]); werr != nil {
					return
				}
				if f != nil {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	})
}
