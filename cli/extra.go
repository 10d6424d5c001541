package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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

const statsUsage = "mcp-toolsearch stats LOG: per session of a session log (telemetry.session_log): schemas the model saw first, searches, describes, the tools finally called and whether each came from a trusted upstream."

func runStats(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(stdout, statsUsage)
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, statsUsage)
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

const benchUsage = `usage: mcp-toolsearch bench search|surface [flags]
  bench search   search quality (recall@k, nDCG@k, MRR) and speed over labelled JSON Lines files
  bench surface  bytes of tools/list + instructions in each mode, and the ratio to direct
mcp-toolsearch bench search --help and bench surface --help say more.`

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

func runBench(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(stdout, benchUsage)
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, benchUsage)
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

const benchSearchUsage = `mcp-toolsearch bench search --tools T.jsonl --queries Q.jsonl [--k 10] [--distractors D.jsonl[,D2.jsonl]]
mcp-toolsearch bench search --dir FOLDER [--distractors D.jsonl] [--catalog-size N] [--half tune|held]
Search quality and speed of the catalog's search over labelled files: top-1, recall@k, nDCG@k,
MRR and the time per query, beside three baselines run on the same tools and queries: plain
BM25, a Codex-style BM25 (Codex CLI's tool_search: English stemmer and stop words, at most 8
results) and Claude Code's ToolSearch keyword scoring (at most 5 results; also with each tool's
search hint, the _meta["anthropic/searchHint"] that direct mode sends).
With --dir, every set runs alone and then with the distractors; --catalog-size N fills each
catalog with distractors up to N tools instead (from the distractor files, then the other
sets' tools of the folder).

Files are JSON Lines. A tools file has one tool per line:
  {"id": "github::create_issue", "server": "github", "name": "create_issue",
   "description": "Create a new issue in a GitHub repository", "inputSchema": {...}}
A queries file has one labelled query per line, naming the ids of the relevant tools:
  {"qid": "gh-1", "query": "open a bug report on GitHub", "relevant": ["github::create_issue"]}
A distractors file is a tools file whose tools are added to the index unlabelled.

Example, with the files shipped in this repository (12 labelled queries, 1,000 distractors):
  mcp-toolsearch bench search --tools examples/catalogs/github-like.jsonl \
      --queries examples/catalogs/github-like.queries.jsonl \
      --distractors examples/catalogs/toolsdk-1000.jsonl
Larger labelled sets (tools.jsonl and queries.jsonl per source) are described in
docs/performance.md ("Search data").

Flags:
`

func runBenchSearch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tools := fs.String("tools", "", "labelled tools, JSON Lines (shared/bench format)")
	queries := fs.String("queries", "", "labelled queries, JSON Lines")
	dir := fs.String("dir", "", "run every labelled set of this folder (each sub-folder with tools.jsonl and queries.jsonl) instead of --tools/--queries")
	distractors := fs.String("distractors", "", "extra unlabelled tools added to the index, JSON Lines (several: comma-separated); with --dir every set runs alone and then with them")
	catalogSize := fs.Int("catalog-size", 0, "fill the catalog with distractors up to this many tools (0: every distractor)")
	half := fs.String("half", "", "run every other query only: tune (1st, 3rd, …) or held (2nd, 4th, …; held out from tuning)")
	k := fs.Int("k", 10, "cut-off for recall@k and nDCG@k")
	semantic := fs.Bool("semantic", catalog.DefaultRankParams().Semantic > 0, "rank with the semantic signal (the lexical-only figures are printed too)")
	weight := fs.Float64("semantic-weight", catalog.DefaultSemanticWeight, "weight of the semantic signal when it is on (for measuring)")
	dense := fs.Bool("dense", catalog.DefaultRankParams().Dense > 0, "rank with the dense signal (static embeddings; the figures without it are printed too)")
	denseWeight := fs.Float64("dense-weight", catalog.DefaultDenseWeight, "weight of the dense signal when it is on (for measuring)")
	clauseMix := fs.Float64("clause-mix", catalog.DefaultRankParams().ClauseMix, "weight of the per-clause signal for queries that ask for several things, 0 = off (for measuring)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchSearchUsage)
		fs.PrintDefaults()
	}
	for _, a := range args {
		if isHelp(a) { // help goes to stdout, exit 0
			fs.SetOutput(stdout)
		}
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		return noArguments("bench search", fs.Args(), stderr)
	}
	if *k < 1 {
		fmt.Fprintf(stderr, "bench search: --k %d: want a cut-off of 1 or more\n", *k)
		return exitUsage
	}
	if *catalogSize < 0 {
		fmt.Fprintf(stderr, "bench search: --catalog-size %d: want a number of tools, 1 or more (0: every distractor)\n", *catalogSize)
		return exitUsage
	}
	if *half != "" && *half != "tune" && *half != "held" {
		fmt.Fprintf(stderr, "bench search: --half %q: want tune or held\n", *half)
		return exitUsage
	}
	if *catalogSize > 0 && *distractors == "" {
		fmt.Fprintln(stderr, "bench search: --catalog-size needs --distractors (the tools it fills the catalog with)")
		return exitUsage
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
	p.ClauseMix = *clauseMix
	p.Dense = 0
	if *dense {
		p.Dense = *denseWeight
	}
	opts := catalog.BenchOptions{K: *k, Params: &p, CatalogSize: *catalogSize, Half: *half}
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
	if *catalogSize > 0 {
		runs = []string{*distractors} // one run per set, at that size
	}
	var reps []*catalog.BenchReport
	for _, set := range sets {
		opts.Pool = nil
		for _, other := range sets {
			if other != set {
				opts.Pool = append(opts.Pool, filepath.Join(other, "tools.jsonl"))
			}
		}
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
	c := newFlags("bench surface", "mcp-toolsearch bench surface [FILE | --config FILE | --tools T.jsonl [--limit N]]: tools/list + instructions bytes of each mode, the ratio to direct (the tools as the upstreams send them), and the first-contact bytes (the surface's own tools and instructions).", stderr)
	toolsFile := c.fs.String("tools", "", "measure a JSON Lines catalog (shared/bench format) instead of the config's upstreams")
	limit := c.fs.Int("limit", 0, "with --tools: use only the first N tools")
	trusted := c.fs.Bool("trusted", false, "with --tools: treat the tools as trusted")
	if code, ok := c.parseWithConfig(args, stderr); !ok {
		return code
	}
	if err := positiveInt(c.fs, "limit", *limit, "a number of tools"); err != nil {
		fmt.Fprintln(stderr, "bench surface:", err)
		return exitUsage
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
	fmt.Fprintln(tw, "mode\ttools\ttools/list bytes\tinstructions bytes\ttotal bytes\tratio to direct\tfirst contact bytes\t")
	for _, r := range rows {
		fc := "-"
		if r.FirstContactBytes > 0 {
			fc = strconv.Itoa(r.FirstContactBytes)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.4f\t%s\t\n", r.Mode, r.Tools, r.ToolsListBytes, r.InstructionsBytes, r.TotalBytes, r.RatioToDirect, fc)
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "direct: the tools as their upstreams send them, under their exposed names, the baseline of the ratios; direct+hints: the proxy's direct mode ([tool_search] enabled = false), which adds each tool's search hint in _meta.")
	fmt.Fprintln(stdout, "first contact: the surface's own tools in tools/list (without direct-only and pinned tools, and directory mode's directory) plus the instructions: what a model reads to use the surface.")
	return exitOK
}
