// Command slowloris is the attacker of the front exhaustion test
// (integration/front_test.go). It opens -n TCP
// connections to -addr from the source addresses in -src (round robin) and
// keeps each one slow and unauthenticated:
//
//	-mode headers     sends a request line and one header, then one more
//	                  header line every -trickle (the headers never end)
//	-mode wrongtoken  sends complete headers with a wrong bearer token and a
//	                  64 KiB Content-Length (small enough that net/http would
//	                  read the rest of a rejected body), then one body byte
//	                  every -trickle
//
// It prints one line when every connection was attempted:
//
//	opened N failed F
//
// and, when its stdin closes, a final line and exits:
//
//	open K closed C status401 S
//
// (K still open as seen from here, C closed by the server, S of those
// answered with 401 first).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "", "host:port of the proxy")
	n := flag.Int("n", 1000, "connections to open")
	src := flag.String("src", "127.0.0.1", "comma list of source IP addresses")
	mode := flag.String("mode", "headers", `"headers" or "wrongtoken"`)
	trickle := flag.Duration("trickle", 2*time.Second, "pause between trickled bytes")
	flag.Parse()
	var srcs []*net.TCPAddr
	for _, s := range strings.Split(*src, ",") {
		srcs = append(srcs, &net.TCPAddr{IP: net.ParseIP(s)})
	}
	var open, closed, got401 atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	failed := 0
	for i := 0; i < *n; i++ {
		d := net.Dialer{LocalAddr: srcs[i%len(srcs)], Timeout: 10 * time.Second}
		c, err := d.Dial("tcp", *addr)
		if err != nil {
			failed++
			continue
		}
		open.Add(1)
		switch *mode {
		case "wrongtoken":
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong-token\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n{")
		default:
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		}
		wg.Add(2)
		go func() { // read until the server closes
			defer wg.Done()
			r := bufio.NewReader(c)
			line, _ := r.ReadString('\n')
			if strings.Contains(line, " 401 ") {
				got401.Add(1)
			}
			_, _ = io.Copy(io.Discard, r)
			open.Add(-1)
			closed.Add(1)
		}()
		go func() { // trickle
			defer wg.Done()
			defer c.Close()
			t := time.NewTicker(*trickle)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					var err error
					if *mode == "wrongtoken" {
						_, err = c.Write([]byte(" "))
					} else {
						_, err = c.Write([]byte("X-Slow: 1\r\n"))
					}
					if err != nil {
						return
					}
				}
			}
		}()
	}
	fmt.Printf("opened %d failed %d\n", *n-failed, failed)
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Printf("open %d closed %d status401 %d\n", open.Load(), closed.Load(), got401.Load())
	close(stop)
	os.Exit(0)
}
