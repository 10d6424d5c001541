//go:build unix

package integration

// End-to-end tests of policy, trust and approvals: the real binary,
// real upstreams (examples/catalogserver, the npm server-memory), real
// clients (client.mjs on the official TypeScript SDK).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogWithout writes the lines of examples/catalogs/github-like.jsonl
// whose "name" is not drop into a temp file and returns its path: the
// catalog in which drop is truly unknown.
func catalogWithout(t *testing.T, drop string) string {
	t.Helper()
	f, err := os.Open(catalogFile(t, "github-like.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	found := false
	for sc.Scan() {
		var rec struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Name == drop {
			found = true
			continue
		}
		out = append(out, sc.Text())
	}
	if !found {
		t.Fatalf("github-like.jsonl has no tool %q", drop)
	}
	p := filepath.Join(t.TempDir(), "tools.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// denyConfig is the catalog server under the prefix "cat", with the policy
// allowing cat__delete_file twice (glob and name) and denying it once. In
// the reference deployment (toolsFile without the tool) the deny entry is
// a glob: a literal deny entry that matches no tool refuses the config.
func denyConfig(t *testing.T, toolsFile string, enabled bool, mode string) string {
	deny := "cat__delete_file"
	if !strings.Contains(readFile(t, toolsFile), `"delete_file"`) {
		deny = "cat__delete_fil?"
	}
	return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = %t
mode = %q
[upstreams.cat]
command = %s
args = ["-tools", %s]
trusted = true
[tools]
allow = ["cat__*", "cat__delete_file"]
deny = [%q]
`, enabled, mode, tomlString(catalogServer(t)), tomlString(toolsFile), deny))
}

// stepOutcome is a client.mjs step's result or error, as JSON.
func stepOutcome(t *testing.T, doc map[string]any, i int) string {
	t.Helper()
	st := jpath(t, doc, "steps", i).(map[string]any)
	v, ok := st["result"]
	if !ok {
		v = st["error"]
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDeniedToolUnreachable is the must-show "a denied tool cannot be
// reached by any route": for each route the proxy's answer about the denied
// cat__delete_file is byte-identical to its answer in a deployment where
// the upstream has no such tool at all, and is an unknown-tool answer.
func TestDeniedToolUnreachable(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	full := catalogFile(t, "github-like.jsonl")
	without := catalogWithout(t, "delete_file")
	// run runs the same steps against the deny deployment and the
	// reference deployment (tool absent) and returns both documents.
	run := func(t *testing.T, enabled bool, mode string, steps ...map[string]any) (denied, absent map[string]any) {
		script := scriptArg(t, steps...)
		denied = nodeClient(t, append([]string{"--quiet", "--script", script, "--"}, proxyCmd(t, denyConfig(t, full, enabled, mode))...)...)
		absent = nodeClient(t, append([]string{"--quiet", "--script", script, "--"}, proxyCmd(t, denyConfig(t, without, enabled, mode))...)...)
		return denied, absent
	}
	same := func(t *testing.T, route string, denied, absent map[string]any, i int, wantSub string) {
		t.Helper()
		d, a := stepOutcome(t, denied, i), stepOutcome(t, absent, i)
		if d != a {
			t.Errorf("%s: the denied tool's answer differs from an unknown tool's:\n denied: %s\n absent: %s", route, tail(d, 800), tail(a, 800))
		}
		if !strings.Contains(d, wantSub) {
			t.Errorf("%s: answer %s does not contain %q", route, tail(d, 800), wantSub)
		}
	}
	call := func(name string, args any) map[string]any {
		return map[string]any{"op": "call", "name": name, "args": args}
	}

	t.Run("direct mode", func(t *testing.T) {
		denied, absent := run(t, false, "code",
			map[string]any{"op": "list"},
			call("cat__delete_file", map[string]any{"path": "/x"}),
			call("CAT__Delete_File", map[string]any{"path": "/x"}),
			call("mcp:cat:delete_file", map[string]any{"path": "/x"}),
		)
		t.Run("tools/list", func(t *testing.T) {
			same(t, "tools/list", denied, absent, 0, `"cat__create_issue"`)
			if strings.Contains(stepOutcome(t, denied, 0), "delete_file") {
				t.Error("tools/list shows the denied tool")
			}
		})
		t.Run("tools/call exposed name", func(t *testing.T) { same(t, "call", denied, absent, 1, `unknown tool \"cat__delete_file\"`) })
		t.Run("tools/call case variant", func(t *testing.T) { same(t, "call", denied, absent, 2, `unknown tool \"CAT__Delete_File\"`) })
		t.Run("tools/call id", func(t *testing.T) { same(t, "call", denied, absent, 3, `unknown tool \"mcp:cat:delete_file\"`) })
	})

	t.Run("tools mode", func(t *testing.T) {
		denied, absent := run(t, true, "tools",
			call("tool_call", map[string]any{"id": "mcp:cat:delete_file", "args": map[string]any{"path": "/x"}}),
			call("tool_call", map[string]any{"id": "cat__delete_file", "args": map[string]any{"path": "/x"}}),
			call("tool_call", map[string]any{"id": "delete_file", "args": map[string]any{}}),
			call("tool_search", map[string]any{"query": "delete a file from the filesystem", "limit": 20}),
			call("tool_describe", map[string]any{"id": "mcp:cat:delete_file"}),
			call("tool_describe", map[string]any{"id": "cat__delete_file"}),
			call("cat__delete_file", map[string]any{"path": "/x"}),
		)
		t.Run("tool_call by id", func(t *testing.T) { same(t, "tool_call", denied, absent, 0, `unknown tool \"mcp:cat:delete_file\"`) })
		t.Run("tool_call by exposed name", func(t *testing.T) { same(t, "tool_call", denied, absent, 1, `unknown tool \"cat__delete_file\"`) })
		t.Run("tool_call by original name", func(t *testing.T) { same(t, "tool_call", denied, absent, 2, `unknown tool \"delete_file\"`) })
		t.Run("tool_search hits", func(t *testing.T) {
			// Hits are compared with their score: the search index of a
			// view that denies tools is built over only what it allows, so
			// the denied tool does not even shift BM25 statistics.
			hits := func(doc map[string]any) string {
				var out []string
				for _, h := range jpath(t, doc, "steps", 3, "result", "structuredContent", "hits").([]any) {
					b, _ := json.Marshal(h)
					out = append(out, string(b))
				}
				return strings.Join(out, "\n")
			}
			d, a := hits(denied), hits(absent)
			if d != a || d == "" {
				t.Errorf("hits differ:\n denied: %s\n absent: %s", d, a)
			}
			if strings.Contains(stepOutcome(t, denied, 3), "delete_file") {
				t.Error("tool_search returned the denied tool")
			}
		})
		t.Run("tool_describe by id", func(t *testing.T) {
			same(t, "tool_describe", denied, absent, 4, `unknown tool \"mcp:cat:delete_file\"`)
		})
		t.Run("tool_describe by name", func(t *testing.T) { same(t, "tool_describe", denied, absent, 5, `unknown tool \"cat__delete_file\"`) })
		t.Run("tools/call of the hidden name", func(t *testing.T) { same(t, "call", denied, absent, 6, `unknown tool \"cat__delete_file\"`) })
	})

	t.Run("directory mode", func(t *testing.T) {
		// The calls first: they wait for the upstream still starting
		// (initialize and tools/list are answered at once); the list after
		// them holds the directory in tool_search's description.
		denied, absent := run(t, true, "directory",
			call("cat__delete_file", map[string]any{"path": "/x"}),
			call("cat__create_issue", map[string]any{"owner": "o", "repo": "r", "title": "hydrated"}),
			map[string]any{"op": "list"},
		)
		t.Run("directory", func(t *testing.T) {
			same(t, "tools/list", denied, absent, 2, "cat__create_issue")
			if d := stepOutcome(t, denied, 2); strings.Contains(d, "delete_file") {
				t.Errorf("the directory shows the denied tool: %s", tail(d, 800))
			}
			if di := jpath(t, denied, "initialize", "instructions").(string); strings.Contains(di, "delete_file") {
				t.Errorf("the instructions show the denied tool: %s", di)
			}
		})
		t.Run("hydrated directory name", func(t *testing.T) {
			same(t, "call", denied, absent, 0, `unknown tool \"cat__delete_file\"`)
			// The route itself works for an allowed directory name.
			if !strings.Contains(stepOutcome(t, denied, 1), `hydrated`) {
				t.Errorf("allowed directory name did not run: %s", stepOutcome(t, denied, 1))
			}
		})
	})

	t.Run("code mode bridge", func(t *testing.T) {
		code := func(body string) map[string]any {
			return call("tool_search_code", map[string]any{"code": body})
		}
		denied, absent := run(t, true, "code",
			code(`try { return await openclaw.tools.call("mcp:cat:delete_file", {path: "/x"}); } catch (e) { return "rejected: " + String(e && e.message || e); }`),
			code(`try { return await openclaw.tools.call("cat__delete_file", {path: "/x"}); } catch (e) { return "rejected: " + String(e && e.message || e); }`),
			code(`const hits = await openclaw.tools.search("delete a file from the filesystem", {limit: 20}); return hits.map(h => h.id);`),
			code(`try { return await openclaw.tools.describe("mcp:cat:delete_file"); } catch (e) { return "rejected: " + String(e && e.message || e); }`),
			code(`return (await openclaw.tools.call("mcp:cat:create_issue", {owner: "o", repo: "r", title: "via bridge"})).result.details;`),
		)
		text := func(doc map[string]any, i int) string {
			return jpath(t, doc, "steps", i, "result", "content", 0, "text").(string)
		}
		for i, route := range []string{"bridge call by id", "bridge call by name", "bridge search", "bridge describe"} {
			t.Run(route, func(t *testing.T) {
				d, a := text(denied, i), text(absent, i)
				if d != a {
					t.Errorf("denied: %s\nabsent: %s", d, a)
				}
				if i != 2 && (!strings.Contains(d, "rejected: ") || !strings.Contains(d, "unknown tool")) {
					t.Errorf("want a rejection naming an unknown tool, got %s", d)
				}
				if i == 2 && (strings.Contains(d, "delete_file") || !strings.Contains(d, "mcp:cat:")) {
					t.Errorf("search hits = %s", d)
				}
			})
		}
		if !strings.Contains(text(denied, 4), "via bridge") {
			t.Errorf("the bridge does not call allowed tools: %s", text(denied, 4))
		}
	})
}

// TestAllowNothingFailsClosed: allow = ["cat__nosuch_tool"] refuses to start
// (serve and check exit non-zero naming the entry).
func TestAllowNothingFailsClosed(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.cat]
command = %s
args = ["-tools", %s]
[tools]
allow = ["cat__nosuch_tool"]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	for _, sub := range [][]string{{"serve", "--config", cfg}, {"check", "--config", cfg}} {
		cmd := exec.Command(buildProxy(t), sub...)
		cmd.Stdin = strings.NewReader("") // serve over stdio would read it; it must not get that far
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() == 0 {
			t.Errorf("%s: err = %v, want a non-zero exit\n%s", sub[0], err, out)
			continue
		}
		if !strings.Contains(string(out), `"cat__nosuch_tool"`) || !strings.Contains(string(out), "fails closed") {
			t.Errorf("%s: output does not name the entry:\n%s", sub[0], out)
		}
	}
}

// listedNames returns the sorted tool names of a client.mjs list step.
func listedNames(t *testing.T, doc map[string]any, step int) []string {
	t.Helper()
	var out []string
	for _, tl := range jpath(t, doc, "steps", step, "result", "tools").([]any) {
		out = append(out, tl.(map[string]any)["name"].(string))
	}
	slices.Sort(out)
	return out
}

// TestPerClientAndEndpointSubsets: one HTTP deployment; two clients with
// different clientInfo.name get different tool subsets, and so do two
// endpoints; a call outside the subset is an unknown tool.
func TestPerClientAndEndpointSubsets(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	port := freePort(t)
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
transport = "http"
listen = "127.0.0.1:%d"
[tool_search]
enabled = false
[upstreams.cat]
command = %s
args = ["-tools", %s]
[tools]
deny = ["cat__delete_file"]
[tools.by_client."alice*"]
allow = ["cat__*_issue*"]
[tools.by_client."bob"]
allow = ["cat__post_message", "cat__list_channels"]
[endpoints.weather]
path = "/weather/mcp"
tools = { allow = ["cat__get_forecast"] }
[endpoints.chat]
path = "/chat/mcp"
tools = { allow = ["cat__post_message", "cat__delete_file"] }
`, port, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startHTTPServer(t, proxyCmd(t, cfg), nil, base+"/mcp")
	script := scriptArg(t, map[string]any{"op": "list"}, map[string]any{"op": "call", "name": "cat__get_forecast", "args": map[string]any{"city": "Oslo"}})
	list := func(url, client string) (map[string]any, []string) {
		doc := nodeClient(t, "--client-name", client, "--script", script, "--http", url)
		return doc, listedNames(t, doc, 0)
	}
	_, alice := list(base+"/mcp", "alice-desktop")
	bobDoc, bob := list(base+"/mcp", "bob")
	_, other := list(base+"/mcp", "someone-else")
	_, weather := list(base+"/weather/mcp", "bob") // by_client applies on top of the endpoint
	chatDoc, chat := list(base+"/chat/mcp", "carol")
	want := map[string][]string{
		"alice": {"cat__create_issue", "cat__create_issue_2", "cat__list_issues", "cat__search_issues", "cat__update_issue"},
		"bob":   {"cat__list_channels", "cat__post_message"},
		"chat":  {"cat__post_message"}, // deny in [tools] still wins over the endpoint's allow
	}
	if !reflect.DeepEqual(alice, want["alice"]) {
		t.Errorf("alice-desktop sees %v, want %v", alice, want["alice"])
	}
	if !reflect.DeepEqual(bob, want["bob"]) {
		t.Errorf("bob sees %v, want %v", bob, want["bob"])
	}
	if len(other) != 11 || slices.Contains(other, "cat__delete_file") {
		t.Errorf("someone-else sees %v, want the 11 tools but cat__delete_file", other)
	}
	if !reflect.DeepEqual(chat, want["chat"]) {
		t.Errorf("endpoint chat sees %v, want %v", chat, want["chat"])
	}
	// bob on /weather/mcp: the endpoint grants only get_forecast, and bob's
	// by_client allow list may only narrow that grant, never add to it
	// (clientInfo.name is chosen by the client, so untrusted;
	// docs/policy.md): nothing is left.
	if len(weather) != 0 {
		t.Errorf("bob on endpoint weather sees %v, want none (by_client narrows the endpoint's grant)", weather)
	}
	_, carolWeather := list(base+"/weather/mcp", "carol")
	if !reflect.DeepEqual(carolWeather, []string{"cat__get_forecast"}) {
		t.Errorf("carol on endpoint weather sees %v, want [cat__get_forecast]", carolWeather)
	}
	// Calls follow the same subsets.
	if s := stepOutcome(t, bobDoc, 1); !strings.Contains(s, `unknown tool \"cat__get_forecast\"`) {
		t.Errorf("bob calling cat__get_forecast: %s", s)
	}
	if s := stepOutcome(t, chatDoc, 1); !strings.Contains(s, "unknown tool") {
		t.Errorf("chat endpoint calling cat__get_forecast: %s", s)
	}
}

// memoryConfig is server-memory (its store in a temp file) with approval
// required for create_entities; extra is appended under [tools].
func memoryConfig(t *testing.T, mode string, extra string) (cfg, memFile string) {
	t.Helper()
	mem := npmServer(t, "memory")
	memFile = filepath.Join(t.TempDir(), "memory.jsonl")
	enabled := mode != "direct"
	if mode == "direct" {
		mode = "code"
	}
	cfg = writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = %t
mode = %q
[upstreams.memory]
command = %s
args = [%s]
env = { MEMORY_FILE_PATH = %s }
[tools]
require_approval = ["memory__create_entities"]
%s
`, enabled, mode, tomlString(mem[0]), quoteArgs(mem[1:]), tomlString(memFile), extra))
	return cfg, memFile
}

// createEntity are create_entities arguments adding one entity named name.
func createEntity(name string) map[string]any {
	return map[string]any{"entities": []any{map[string]any{"name": name, "entityType": "test", "observations": []any{"made through the proxy"}}}}
}

// memoryHas reports whether server-memory's store holds an entity named name.
func memoryHas(t *testing.T, file, name string) bool {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), `"name":"`+name+`"`)
}

// blockedMeta reports whether a client.mjs call step's result is the
// proxy's approval-blocked result.
func blockedMeta(t *testing.T, doc map[string]any, step int) (blocked bool, text string) {
	t.Helper()
	res, ok := jpath(t, doc, "steps", step).(map[string]any)["result"].(map[string]any)
	if !ok {
		t.Fatalf("step %d has no result: %s", step, stepOutcome(t, doc, step))
	}
	if c, ok := res["content"].([]any); ok && len(c) > 0 {
		text, _ = c[0].(map[string]any)["text"].(string)
	}
	meta, _ := res["_meta"].(map[string]any)
	return res["isError"] == true && meta["io.github.mcp-toolsearch/blocked"] == "approval", text
}

// TestApprovalByElicitation: a call needing approval, made by a real
// client with elicitation, runs only after accept; declined it is reported
// blocked and server-memory never stored the entity; from a client without
// elicitation it is blocked; through the code bridge the question goes to
// the client that called tool_search_code.
func TestApprovalByElicitation(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	cfg, memFile := memoryConfig(t, "direct", "")
	run := func(entity string, clientArgs ...string) map[string]any {
		args := append(clientArgs, "--quiet", "--script", scriptArg(t, map[string]any{"op": "call", "name": "memory__create_entities", "args": createEntity(entity)}), "--")
		return nodeClient(t, append(args, proxyCmd(t, cfg)...)...)
	}
	t.Run("accept", func(t *testing.T) {
		doc := run("accepted-entity", "--caps", "elicitation", "--elicit", "accept")
		reqs := jpath(t, doc, "serverRequests").([]any)
		if len(reqs) != 1 || jpath(t, reqs[0], "method") != "elicitation/create" {
			t.Fatalf("server requests = %v, want one elicitation/create", reqs)
		}
		msg := jpath(t, reqs[0], "params", "message").(string)
		for _, w := range []string{"mcp:memory:create_entities", `upstream "memory"`, "entities: "} {
			if !strings.Contains(msg, w) {
				t.Errorf("elicitation message lacks %q: %s", w, msg)
			}
		}
		if b, text := blockedMeta(t, doc, 0); b || jpath(t, doc, "steps", 0, "result").(map[string]any)["isError"] == true {
			t.Fatalf("accepted call was blocked: %s", text)
		}
		if !memoryHas(t, memFile, "accepted-entity") {
			t.Error("after accept, server-memory's store lacks the entity")
		}
	})
	for answer, past := range map[string]string{"decline": "declined", "cancel": "cancelled"} {
		t.Run(answer, func(t *testing.T) {
			entity := past + "-entity"
			doc := run(entity, "--caps", "elicitation", "--elicit", answer)
			if n := len(jpath(t, doc, "serverRequests").([]any)); n != 1 {
				t.Errorf("server requests = %d, want 1", n)
			}
			b, text := blockedMeta(t, doc, 0)
			if !b || !strings.Contains(text, "blocked by approval") || !strings.Contains(text, "the person "+past) {
				t.Errorf("want the blocked result, got blocked=%v %q", b, text)
			}
			if memoryHas(t, memFile, entity) {
				t.Error("the upstream saw a call that was " + past)
			}
		})
	}
	t.Run("client without elicitation", func(t *testing.T) {
		doc := run("no-caps-entity", "--caps", "none")
		b, text := blockedMeta(t, doc, 0)
		if !b || !strings.Contains(text, "does not support elicitation") {
			t.Errorf("want blocked (fail closed), got blocked=%v %q", b, text)
		}
		if n := len(jpath(t, doc, "serverRequests").([]any)); n != 0 {
			t.Errorf("server requests = %d, want 0", n)
		}
		if memoryHas(t, memFile, "no-caps-entity") {
			t.Error("the upstream saw a blocked call")
		}
	})
	t.Run("code bridge asks the calling client", func(t *testing.T) {
		codeCfg, codeMem := memoryConfig(t, "code", "")
		body := `const r = await openclaw.tools.call("mcp:memory:create_entities", %s); return {isError: !!r.result.isError, meta: r.result._meta || null};`
		argsJSON, _ := json.Marshal(createEntity("bridge-entity"))
		for _, answer := range []string{"decline", "accept"} {
			doc := nodeClient(t, append([]string{"--caps", "elicitation", "--elicit", answer, "--quiet", "--script",
				scriptArg(t, map[string]any{"op": "call", "name": "tool_search_code", "args": map[string]any{"code": fmt.Sprintf(body, argsJSON)}}), "--"}, proxyCmd(t, codeCfg)...)...)
			if n := len(jpath(t, doc, "serverRequests").([]any)); n != 1 {
				t.Errorf("%s: server requests = %d, want 1 elicitation", answer, n)
			}
			text := jpath(t, doc, "steps", 0, "result", "content", 0, "text").(string)
			if got := memoryHas(t, codeMem, "bridge-entity"); got != (answer == "accept") {
				t.Errorf("%s: entity stored = %v; bridge result %s", answer, got, text)
			}
			if answer == "decline" && !strings.Contains(text, `"io.github.mcp-toolsearch/blocked":"approval"`) {
				t.Errorf("decline through the bridge: %s", text)
			}
		}
	})
}

// TestApprovalCommandScript: with tools.approval_command, a client without
// elicitation (and the CLI) get the program's answer.
func TestApprovalCommandScript(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	dir := t.TempDir()
	seen := filepath.Join(dir, "requests.jsonl")
	// Allows entities whose name starts with "ok-", denies the rest; logs
	// every request it got.
	script := filepath.Join(dir, "approve.sh")
	body := fmt.Sprintf("#!/bin/sh\nin=$(cat)\nprintf '%%s\\n' \"$in\" >> %s\necho 'asked' >&2\ncase \"$in\" in *'\"name\":\"ok-'*) echo allow;; *) echo DENY;; esac\n", tomlString(seen)[1:len(tomlString(seen))-1])
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, memFile := memoryConfig(t, "direct", fmt.Sprintf("approval_command = [%s]\n", tomlString(script)))
	doc := nodeClient(t, append([]string{"--client-name", "scripted", "--quiet", "--script", scriptArg(t,
		map[string]any{"op": "call", "name": "memory__create_entities", "args": createEntity("ok-allowed")},
		map[string]any{"op": "call", "name": "memory__create_entities", "args": createEntity("denied-one")},
	), "--"}, proxyCmd(t, cfg)...)...)
	if b, text := blockedMeta(t, doc, 0); b {
		t.Errorf("allow: blocked: %s", text)
	}
	if !memoryHas(t, memFile, "ok-allowed") {
		t.Error("allow: the entity was not stored")
	}
	b, text := blockedMeta(t, doc, 1)
	if !b || !strings.Contains(text, "answered deny") {
		t.Errorf("deny: blocked=%v %q", b, text)
	}
	if memoryHas(t, memFile, "denied-one") {
		t.Error("deny: the upstream saw the call")
	}
	reqs := lines(readFile(t, seen))
	if len(reqs) != 2 {
		t.Fatalf("approval_command ran %d times, want 2", len(reqs))
	}
	var req map[string]any
	if err := json.Unmarshal([]byte(reqs[0]), &req); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"id": "mcp:memory:create_entities", "upstream": "memory", "tool": "create_entities", "exposed": "memory__create_entities", "client": "scripted"} {
		if req[k] != v {
			t.Errorf("request %s = %v, want %q", k, req[k], v)
		}
	}
	// The CLI goes through the same call path: exit 0 when allowed, 3
	// (isError) when denied.
	for _, c := range []struct {
		name string
		code int
	}{{"ok-cli", 0}, {"cli-denied", 3}} {
		a, _ := json.Marshal(createEntity(c.name))
		cmd := exec.Command(buildProxy(t), "call", "--config", cfg, "memory__create_entities", "--args", string(a))
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != c.code || memoryHas(t, memFile, c.name) != (c.code == 0) {
			t.Errorf("cli call %s: exit %d (want %d), stored %v\n%s", c.name, cmd.ProcessState.ExitCode(), c.code, memoryHas(t, memFile, c.name), out)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTrustedOutputValidation: a trusted tool whose structuredContent
// breaks its outputSchema gets an isError result naming the field; the
// same tool from an untrusted upstream is passed through; a schema that
// does not compile stops the call before the upstream.
func TestTrustedOutputValidation(t *testing.T) {
	requireNode(t)
	// The catalog server's echo is {"tool": NAME, "arguments": ARGS}, so
	// the arguments decide whether it matches this schema.
	schema := `{"type":"object","properties":{"tool":{"type":"string"},"arguments":{"type":"object","properties":{"paid":{"type":"boolean"}},"required":["paid"]}},"required":["tool","arguments"]}`
	broken := `{"type":"object","properties":{"x":{"$ref":"#/$defs/nowhere"}}}`
	srv := fmt.Sprintf(`command = %s
args = ["-tools", %s, "-output-schema", %s, "-output-schema", %s]`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")),
		tomlString("get_forecast="+schema), tomlString("list_channels="+broken))
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false
[upstreams.trusted]
%s
trusted = true
[upstreams.plain]
%s
`, srv, srv))
	call := func(name string, args any) map[string]any {
		return map[string]any{"op": "call", "name": name, "args": args}
	}
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t,
		call("trusted__get_forecast", map[string]any{"paid": true}),
		call("trusted__get_forecast", map[string]any{"paid": "yes"}),
		call("plain__get_forecast", map[string]any{"paid": "yes"}),
		call("trusted__list_channels", map[string]any{}),
		call("plain__list_channels", map[string]any{}),
	), "--"}, proxyCmd(t, cfg)...)...)
	res := func(i int) map[string]any { return jpath(t, doc, "steps", i, "result").(map[string]any) }
	text := func(i int) string { return jpath(t, doc, "steps", i, "result", "content", 0, "text").(string) }
	if res(0)["isError"] == true || jpath(t, res(0), "structuredContent", "arguments", "paid") != true {
		t.Errorf("conforming output: %v", res(0))
	}
	want := `output of mcp:trusted:get_forecast does not match its outputSchema: /arguments/paid: expected a boolean, got "yes"; schema: {"type":"boolean"}`
	if res(1)["isError"] != true || text(1) != want {
		t.Errorf("breaking output:\n got %v %q\nwant %q", res(1)["isError"], text(1), want)
	}
	if _, has := res(1)["structuredContent"]; has {
		t.Error("the breaking structuredContent reached the client")
	}
	if res(2)["isError"] == true || jpath(t, res(2), "structuredContent", "arguments", "paid") != "yes" {
		t.Errorf("untrusted output must pass through unchanged: %v", res(2))
	}
	// A schema that does not compile: not validated, the call is made.
	if res(3)["isError"] == true || !strings.Contains(text(3), `"tool":"list_channels"`) {
		t.Errorf("broken schema: %v", res(3))
	}
	if res(4)["isError"] == true || !strings.Contains(text(4), `"tool":"list_channels"`) {
		t.Errorf("untrusted broken schema must pass through: %v", res(4))
	}
}

// TestListShowsPolicyRules: `mcp-toolsearch list --client NAME [--endpoint
// NAME]` prints allowed and denied tools with the rule that decided.
func TestListShowsPolicyRules(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.cat]
command = %s
args = ["-tools", %s]
[tools]
deny = ["*__delete_*"]
require_approval = ["cat__post_message"]
[tools.by_client."alice*"]
allow = ["cat__*_issue*", "cat__post_message"]
[endpoints.weather]
path = "/weather/mcp"
tools = { allow = ["cat__get_forecast"] }
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	list := func(args ...string) map[string]string {
		out, err := exec.Command(buildProxy(t), append([]string{"list", "--config", cfg}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("list %v: %v\n%s", args, err, out)
		}
		rows := map[string]string{}
		for _, l := range lines(string(out)) {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[0], "mcp:cat:") {
				rows[f[1]] = l
			}
		}
		if len(rows) != 12 {
			t.Fatalf("list %v: %d tool rows, want 12:\n%s", args, len(rows), out)
		}
		return rows
	}
	alice := list("--client", "alice-desktop")
	for name, want := range map[string]string{
		"cat__create_issue":  `allowed by tools.by_client."alice*".allow "cat__*_issue*"`,
		"cat__post_message":  `allowed by tools.by_client."alice*".allow "cat__post_message"`,
		"cat__delete_file":   `denied by tools.deny "*__delete_*"`,
		"cat__get_forecast":  `denied: not matched by tools.by_client."alice*".allow`,
		"cat__list_channels": `denied: not matched by`,
	} {
		if !strings.Contains(alice[name], want) {
			t.Errorf("alice %s: %q, want it to contain %q", name, alice[name], want)
		}
	}
	weather := list("--client", "bob", "--endpoint", "weather")
	if !strings.Contains(weather["cat__get_forecast"], `allowed by endpoints.weather.tools.allow "cat__get_forecast"`) ||
		!strings.Contains(weather["cat__create_issue"], "denied: not matched by endpoints.weather.tools.allow") {
		t.Errorf("endpoint weather rows:\n%s\n%s", weather["cat__get_forecast"], weather["cat__create_issue"])
	}
	mainRows := list()
	if !strings.Contains(mainRows["cat__list_channels"], `allowed by profile "full" (default)`) {
		t.Errorf("main endpoint: %q", mainRows["cat__list_channels"])
	}
}

// A deny rule the operator wrote is never a no-op: written with the
// tool's name on its upstream ("delete_file", not "cat__delete_file") it
// keeps the tool away (before: "no tool matches" and the tool stayed
// callable); one that matches no tool at all (a typo) stops `check` and
// `serve`, naming the tool it may have meant.
func TestDenyNeverNoOp(t *testing.T) {
	conf := func(deny string) string {
		return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false
[upstreams.cat]
command = %s
args = ["-tools", %s]
[tools]
deny = [%q]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), deny))
	}
	byName := conf("delete_file")
	if out := runCLI(t, "check", "--config", byName); strings.Contains(out, "fails closed") || !strings.Contains(out, "upstream cat") {
		t.Fatalf("check with a deny by upstream-side name:\n%s", out)
	}
	list := runCLI(t, "list", "--config", byName)
	if !strings.Contains(list, "cat__delete_file") || !strings.Contains(list, `denied by tools.deny "delete_file"`) {
		t.Errorf("list does not show the tool denied by its upstream-side name:\n%s", list)
	}
	cs := gosdkClientStdio(t, proxyCmd(t, byName))
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	if res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "cat__delete_file", Arguments: map[string]any{"path": "/x"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "cat__delete_file"`) {
		t.Errorf("the denied tool answered: %+v %v", res, err)
	}

	typo := conf("delete_fil")
	out := runCLI(t, "check", "--config", typo)
	for _, want := range []string{`tools.deny: "delete_fil" matches no tool`, `did you mean "cat__delete_file" (mcp:cat:delete_file)?`} {
		if !strings.Contains(out, want) {
			t.Errorf("check with a deny typo lacks %q:\n%s", want, out)
		}
	}
	p := startProcess(t, proxyCmd(t, typo), nil)
	select {
	case <-p.done:
	case <-time.After(readyTimeout):
		t.Fatalf("serve with a deny that matches nothing kept running:\n%s", p.Output())
	}
	if !strings.Contains(p.Output(), `"delete_fil" matches no tool`) {
		t.Errorf("serve's log does not say why it stopped:\n%s", tail(p.Output(), 2000))
	}

	// A search mode answers before the upstreams list: once it serves,
	// the typo closes the upstream it names instead of stopping serve.
	search := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"
[upstreams.cat]
command = %s
args = ["-tools", %s]
[tools]
deny = ["cat__delete_fil"]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	sc, log := gosdkClientStdioLog(t, proxyCmd(t, search))
	deadline := time.Now().Add(readyTimeout)
	for !strings.Contains(log.String(), "the upstream it names is closed") {
		if time.Now().After(deadline) {
			t.Fatalf("serve never closed the upstream the typo names:\n%s", tail(log.String(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{`\"cat__delete_fil\" matches no tool`, `did you mean \"cat__delete_file\"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("serve's log lacks %q:\n%s", want, tail(log.String(), 2000))
		}
	}
	res, err := sc.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": "mcp:cat:delete_file", "args": map[string]any{"path": "/x"}}})
	if err != nil || !res.IsError || len(res.Content) == 0 {
		t.Fatalf("a tool of the closed upstream: %+v %v", res, err)
	}
	if tc, ok := res.Content[0].(*gosdk.TextContent); !ok || !strings.Contains(tc.Text, `closed: the config's deny entry \"cat__delete_fil\"`) && !strings.Contains(tc.Text, `closed: the config's deny entry "cat__delete_fil"`) {
		t.Errorf("a tool of the closed upstream, on a serve that keeps serving: %+v %v", res, err)
	}
}
