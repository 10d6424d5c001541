package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

func init() {
	extraCommands["stats"] = runStats
	extraCommands["bench"] = runBench
}

func runStats(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "mcp-toolsearch stats LOG: per session of a session log (telemetry.session_log): schemas the model saw first, searches, describes, the tools finally called and whether each came from a trusted upstream.")
		return exitUsage
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "stats:", err)
		return exitFail
	}
	defer f.Close()
	if err := telemetry.Stats(f, stdout); err != nil {
		fmt.Fprintln(stderr, "stats:", err)
		return exitFail
	}
	return exitOK
}

func runBench(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: mcp-toolsearch bench search|surface [flags]")
		return exitUsage
	}
	switch args[0] {
	case "search":
		return runBenchSearch(args[1:], stdout, stderr)
	case "surface":
		return runBenchSurface(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "bench: unknown benchmark %q (want search or surface)\n", args[0])
	return exitUsage
}

func runBenchSearch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tools := fs.String("tools", "", "labelled tools, JSON Lines (shared/bench format)")
	queries := fs.String("queries", "", "labelled queries, JSON Lines")
	dir := fs.String("dir", "", "run every labelled set of this folder (each sub-folder with tools.jsonl and queries.jsonl) instead of --tools/--queries")
	distractors := fs.String("distractors", "", "extra unlabelled tools added to the index, JSON Lines; with --dir every set runs alone and then with them")
	k := fs.Int("k", 10, "cut-off for recall@k and nDCG@k")
	semantic := fs.Bool("semantic", catalog.DefaultRankParams().Semantic > 0, "rank with the semantic signal (the lexical-only figures are printed too)")
	weight := fs.Float64("semantic-weight", catalog.DefaultSemanticWeight, "weight of the semantic signal when it is on (for measuring)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if (*dir == "") == (*tools == "" || *queries == "") || *dir != "" && (*tools != "" || *queries != "") {
		fmt.Fprintln(stderr, "bench search: --tools and --queries are required (or --dir for every set of a folder)")
		return exitUsage
	}
	p := catalog.DefaultRankParams()
	if !*semantic {
		p.Semantic = 0
	} else {
		p.Semantic = *weight
	}
	opts := catalog.BenchOptions{K: *k, Params: &p}
	if *dir == "" {
		opts.Distractors = *distractors
		rep, err := catalog.RunBenchOptions(*tools, *queries, opts)
		if err != nil {
			fmt.Fprintln(stderr, "bench search:", err)
			return exitFail
		}
		rep.Print(stdout)
		return exitOK
	}
	sets, err := catalog.BenchSets(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "bench search:", err)
		return exitFail
	}
	runs := []string{""}
	if *distractors != "" {
		runs = append(runs, *distractors)
	}
	var reps []*catalog.BenchReport
	for _, set := range sets {
		for _, d := range runs {
			opts.Distractors = d
			rep, err := catalog.RunBenchOptions(filepath.Join(set, "tools.jsonl"), filepath.Join(set, "queries.jsonl"), opts)
			if err != nil {
				fmt.Fprintln(stderr, "bench search:", err)
				return exitFail
			}
			rep.Print(stdout)
			fmt.Fprintln(stdout)
			reps = append(reps, rep)
		}
	}
	catalog.PrintBenchSummary(stdout, reps)
	return exitOK
}

func runBenchSurface(args []string, stdout, stderr io.Writer) int {
	c := newFlags("bench surface", "mcp-toolsearch bench surface [--config FILE | --tools T.jsonl [--limit N]]: tools/list + instructions bytes of each mode, and the ratio to direct.", stderr)
	toolsFile := c.fs.String("tools", "", "measure a JSON Lines catalog (shared/bench format) instead of the config's upstreams")
	limit := c.fs.Int("limit", 0, "with --tools: use only the first N tools")
	trusted := c.fs.Bool("trusted", false, "with --tools: treat the tools as trusted")
	if _, err := c.parse(args); err != nil {
		return parseExit(err)
	}
	var rows []modes.SurfaceSize
	if *toolsFile != "" {
		bt, err := catalog.LoadBenchTools(*toolsFile)
		if err != nil {
			fmt.Fprintln(stderr, "bench surface:", err)
			return exitFail
		}
		if *limit > 0 && *limit < len(bt) {
			bt = bt[:*limit]
		}
		byServer := map[string][]*catalog.Entry{}
		var infos []catalog.UpstreamInfo
		for _, e := range catalog.BenchEntries(bt, "") {
			if _, ok := byServer[e.Upstream]; !ok {
				infos = append(infos, catalog.UpstreamInfo{Name: e.Upstream, Prefix: e.Upstream, Trusted: *trusted})
			}
			byServer[e.Upstream] = append(byServer[e.Upstream], &catalog.Entry{Name: e.Name, Description: e.Description, InputSchema: e.InputSchema})
		}
		cat := catalog.New("__", modes.Reserved, infos)
		for up, es := range byServer {
			cat.SetTools(up, es)
		}
		api := modes.API{Limits: modes.Limits{Default: 8, Max: 20}, Bounds: catalog.DefaultBounds()}
		rows = modes.MeasureSurfaces(benchEnv{snap: cat.Snapshot()}, api, nil, 6000, 10*time.Second)
	} else {
		p, code := c.open(stderr)
		if p == nil {
			return code
		}
		defer closeProxy(p)
		ts := p.Config().ToolSearch
		rows = modes.MeasureSurfaces(p.Env("", ""), p.API(), ts.Pinned, ts.DirectoryMaxChars, time.Duration(ts.CodeTimeoutMS)*time.Millisecond)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttools\ttools/list bytes\tinstructions bytes\ttotal bytes\tratio to direct\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.4f\t\n", r.Mode, r.Tools, r.ToolsListBytes, r.InstructionsBytes, r.TotalBytes, r.RatioToDirect)
	}
	_ = tw.Flush()
	return exitOK
}
