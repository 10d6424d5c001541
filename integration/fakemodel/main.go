// Command fakemodel serves the scripted model of internal/fakemodel on
// loopback, for running a real agent client against the proxy by hand:
//
//	fakemodel [-listen 127.0.0.1:0] [-query Q] [-pick ID-PART] [-args JSON] [-out FILE]
//
// It prints its base URL and the egress proxy's on stdout, then serves
// until interrupted, rewriting -out (default requests.json) after every
// request with every request received so far: the body as the client sent
// it, the tools decoded (name, description, deferred) and the model's reply.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakemodel"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address of the model API")
	query := flag.String("query", "write text to a file", "the model's tool_search query")
	pick := flag.String("pick", "write_file", "the model calls the first hit whose id contains this")
	argsJSON := flag.String("args", `{"path":"hello.txt","content":"hello"}`, "the arguments of the model's call (JSON object)")
	out := flag.String("out", "requests.json", "file rewritten with every request received so far")
	flag.Parse()
	var args map[string]any
	if err := json.Unmarshal([]byte(*argsJSON), &args); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel: -args:", err)
		os.Exit(2)
	}
	m := &fakemodel.Server{Script: fakemodel.SearchDescribeCall(*query, *pick, args)}
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.ServeHTTP(w, r)
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.MarshalIndent(m.Requests(), "", "  ")
		_ = os.WriteFile(*out, b, 0o644)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	eg, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	egress := &fakemodel.Egress{}
	go func() { _ = http.Serve(eg, egress) }()
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		<-c
		fmt.Fprintln(os.Stderr, "fakemodel: egress attempts:", egress.Hosts())
		os.Exit(0)
	}()
	fmt.Printf("model http://%s\negress http://%s\n", ln.Addr(), eg.Addr())
	_ = http.Serve(ln, h)
}
