package cli

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

func init() { extraCommands["healthcheck"] = runHealthcheck }

const healthcheckHelp = `mcp-toolsearch healthcheck [--url http://127.0.0.1:8080/healthz] [--timeout 3s]: GET the running
proxy's /healthz (for a container HEALTHCHECK, where no curl exists). Exit 0 on HTTP 200, 1 otherwise, 2 usage.`

func runHealthcheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:8080/healthz", "the proxy's /healthz URL")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long (above 0)")
	fs.Usage = func() { fmt.Fprintf(stderr, "%s\n\nFlags:\n", healthcheckHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		return noArguments("healthcheck", fs.Args(), stderr)
	}
	if *timeout <= 0 { // 0 would mean no limit to net/http
		fmt.Fprintf(stderr, "mcp-toolsearch healthcheck: --timeout %s: want a duration above 0, such as 3s\n", *timeout)
		return exitUsage
	}
	c := &http.Client{Timeout: *timeout}
	resp, err := c.Get(*url)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch healthcheck: %v\n", err)
		return exitFail
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(stdout, "%s %s\n", resp.Status, body)
	if resp.StatusCode != http.StatusOK {
		return exitFail
	}
	return exitOK
}
