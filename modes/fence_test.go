package modes

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestUnfence: a body that is exactly one fenced block is unwrapped with
// its lines kept in place; anything else is left as sent.
func TestUnfence(t *testing.T) {
	for _, tc := range []struct {
		code, want string
		ok         bool
	}{
		{"```js\nreturn 1\n```", "\nreturn 1\n", true},
		{"```\nreturn 1\n```", "\nreturn 1\n", true},
		{"  \n ```JavaScript \r\nconst a = 1;\r\n  return a\r\n```  \n\n", "  \n\nconst a = 1;\r\n  return a\r\n\n\n", true},
		{"~~~ts\nreturn 1\n~~~", "\nreturn 1\n", true},
		{"````js\nreturn '```'\n```\n````", "\nreturn '```'\n```\n", true}, // a shorter inner fence is content
		{"```js {1,3}\nreturn 1\n```", "\nreturn 1\n", true},
		{"```typescript\nreturn 1\n```", "\nreturn 1\n", true},
		// Left alone.
		{"return 1", "", false},
		{"`abc`.length; return 1", "", false},
		{"```js return 1```", "", false},
		{"```js\nreturn 1", "", false},                               // not closed
		{"```js\nreturn 1\n~~~", "", false},                          // other character
		{"````js\nreturn 1\n```", "", false},                         // shorter close
		{"```js\nreturn 1\n```js", "", false},                        // the last line opens
		{"Here it is:\n```js\nreturn 1\n```", "", false},             // text before
		{"```js\nreturn 1\n```\nThis returns 1.", "", false},         // text after
		{"```js\nconst a = 1\n```\n```js\nreturn a\n```", "", false}, // two blocks
		{"```python\nprint(1)\n```", "", false},                      // not JavaScript
		{"let js = 5\n~~~js\nreturn js", "", false},                  // JavaScript with a ~~~ line
		{"/*\n```js\nexample\n```\n*/\nreturn 1", "", false},         // a fence in a comment
		{"const s = `\n\\`\\`\\`\n`;\nreturn s", "", false},          // escaped backticks in a template
	} {
		got, ok := unfence(tc.code)
		if tc.want == "" {
			tc.want = tc.code
		}
		if got != tc.want || ok != tc.ok {
			t.Errorf("unfence(%q) = %q, %v; want %q, %v", tc.code, got, ok, tc.want, tc.ok)
		}
		if strings.Count(got, "\n") != strings.Count(tc.code, "\n") {
			t.Errorf("unfence(%q) changed the line count", tc.code)
		}
	}
}

// TestCodeFencedBody: a body sent as one Markdown code
// block runs, with errors at their line in the text as sent; a fence that
// cannot be unwrapped gets an error saying to send the body without it; a
// body that starts with a template literal, or holds a ~~~ line that is
// JavaScript, runs as before.
func TestCodeFencedBody(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 2)
	for _, body := range []string{
		"```js\nreturn await openclaw.tools.search(\"create issue\", {limit:1})\n```",
		"\n  ```javascript\r\nconst hits = await openclaw.tools.search(\"create issue\", {limit:1});\r\nreturn hits\r\n```\n",
		"~~~\nreturn await openclaw.tools.search(\"create issue\", {limit:1})\n~~~",
	} {
		r, out := runCode(t, c, env, body)
		if !out.OK || r.IsError || !strings.HasPrefix(string(out.Value), `[{"id":`) || out.Hint != "" {
			t.Errorf("%q: ok=%v error %q value %.60s hint %q", body, out.OK, out.Error, out.Value, out.Hint)
		}
		if txt := resultText(t, r); strings.Contains(txt, "fence") || strings.Contains(string(r.StructuredContent.(json.RawMessage)), "fence") {
			t.Errorf("%q: the result mentions the fence: %q", body, txt)
		}
	}
	_, out := runCode(t, c, env, "```js\nconst a = 1;\nthrow new Error('boom')\n```")
	if out.OK || out.Error != "Error: boom (line 3, col 7)" {
		t.Errorf("fenced throw: %q; want the line and column of the text as sent", out.Error)
	}
	_, out = runCode(t, c, env, "```js\nconst a = 1;\nlet = = 2;\n```")
	if out.OK || out.Error != "SyntaxError: Unexpected token = (line 3, col 7)" {
		t.Errorf("fenced syntax error: %q", out.Error)
	}

	for _, tc := range []struct{ body, want string }{
		{"Here it is:\n```js\nreturn 1\n```", "the body holds Markdown code fences (``` on lines 2 and 4), so it is not JavaScript: send only the JavaScript body, without the ``` fence and any text around it. The run failed with: SyntaxError: "},
		{"```js\nreturn 1\n```\nThis returns 1.", "the body holds Markdown code fences (``` on lines 1 and 3), so it is not JavaScript: send only the JavaScript body, without the ``` fence"},
		{"```js\nconst a = 1\n```\n\n```js\nreturn a\n```", "(``` on lines 1, 3, 5 and 7), so it is not JavaScript: send only the JavaScript body, without the ``` fence"},
		{"```js\nreturn 1", "the body holds a Markdown code fence (``` on line 1), so it is not JavaScript: send only"},
		{"```python\nprint(1)\n```", `so it is not JavaScript (the block is marked "python"; tool_search_code runs JavaScript): send only the JavaScript body`},
		{"~~~js\nreturn 1\n~~~\nDone.", "the body holds Markdown code fences (~~~ on lines 1 and 3), so it is not JavaScript: send only the JavaScript body, without the ~~~ fence"},
	} {
		r, out := runCode(t, c, env, tc.body)
		if out.OK || !r.IsError || !strings.Contains(out.Error, tc.want) || !strings.HasPrefix(resultText(t, r), "tool_search_code failed: the body holds ") || !strings.Contains(resultText(t, r), tc.want) || out.Hint != "" {
			t.Errorf("%q: error %q hint %q; want it to contain %q", tc.body, out.Error, out.Hint, tc.want)
		}
	}

	for _, tc := range []struct{ body, want string }{
		{"`abc`.length; return `x${1}`", `"x1"`},
		{"const s = `\n\\`\\`\\`js\n`;\nreturn s.length", "7"}, // a fence in a template literal is escaped
		{"let js = 5\n~~~js\nreturn js", "5"},
		{"/*\n```js\nexample\n```\n*/\nreturn 1", "1"},
	} {
		_, out := runCode(t, c, env, tc.body)
		if !out.OK || string(out.Value) != tc.want {
			t.Errorf("%q: ok=%v error %q value %s; want %s", tc.body, out.OK, out.Error, out.Value, tc.want)
		}
	}
	// A real error in a body with a fence only in a comment is not blamed on it.
	_, out = runCode(t, c, env, "/*\n```js\nexample\n```\n*/\nnull.x")
	if out.OK || !strings.HasPrefix(out.Error, "TypeError") {
		t.Errorf("fence in a comment: %q", out.Error)
	}
}

// TestFenceLines: fence lines in a /* */ comment, or ~~~ lines in a
// string, are the program's own and blame nothing.
func TestFenceLines(t *testing.T) {
	for _, tc := range []struct {
		code string
		want []int
	}{
		{"Here:\n```js\nreturn 1\n```", []int{1, 3}},
		{"/*\n```js\nx\n```\n*/\nreturn 1", nil},
		{"// ```js\nreturn 1", nil},
		{"const md = `\n~~~\ncode\n~~~\n`;\nreturn md", nil},
		{"const p = \"src/**/*.js\";\n```js\nreturn p\n```", []int{1, 3}},
		{"const s = 'a\\\n~~~';\n~~~", []int{2}},
		{"/* a */\n~~~js\nreturn 1\n~~~", []int{1, 3}},
	} {
		if got := fenceLines(tc.code); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("fenceLines(%q) = %v; want %v", tc.code, got, tc.want)
		}
	}
}
