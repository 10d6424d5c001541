package modes

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/sandbox"
)

// Models often send tool_search_code's body as a Markdown code block
// ("```js\n…\n```"). The backticks are JavaScript too — an empty template
// literal tagging the next one — so the run used to fail with
// "TypeError: Value is not an object:" and no position.
//
// Trust: the body is model-written and untrusted; what is done here is
// plain text work on it, before it reaches the sandbox, and never runs it.

// fenceLineRE matches a line that opens or closes a Markdown code fence
// (CommonMark §4.5): three or more backticks or tildes, indented by any
// spaces or tabs, then an info string (for backticks, without backticks).
// Group 1 is the fence, group 2 the info string.
var fenceLineRE = regexp.MustCompile("^[ \t]*(`{3,}|~{3,})[ \t]*([^`\r\n]*?)[ \t]*\r?$")

// jsLanguages are the info strings (first word, any case) under which a
// fenced body is taken for the JavaScript it is meant to be.
var jsLanguages = map[string]bool{
	"": true, "js": true, "javascript": true, "ts": true, "typescript": true, "jsx": true, "tsx": true,
	"mjs": true, "cjs": true, "node": true, "nodejs": true, "ecmascript": true, "es6": true,
}

// unfence returns the body of code when code is exactly one fenced code
// block: its first non-blank line opens a fence of ``` or ~~~ (with an
// optional language from jsLanguages), its last non-blank line closes it
// (the same character, at least as many, nothing after it), and no line in
// between closes it earlier. The two fence lines are blanked, not removed,
// so every line and column of the body is where it was in what the model
// sent: an error's "(line N, col M)" points into the model's own text.
// Otherwise code is returned unchanged and ok is false.
//
// Unwrapping never changes a JavaScript program that could run: a body
// whose first token is ``` tags a template literal with the empty string,
// a TypeError (or a SyntaxError) every time; one whose last line is only
// ~~~ is a SyntaxError (a unary operator with no operand). A body that
// merely starts with a template literal (one backtick) is no fence.
func unfence(code string) (body string, ok bool) {
	lines := strings.Split(code, "\n")
	first, last := -1, -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || last <= first {
		return code, false
	}
	open := fenceLineRE.FindStringSubmatch(lines[first])
	if open == nil || !jsLanguages[strings.ToLower(firstWord(open[2]))] {
		return code, false
	}
	closes := func(l string) bool {
		m := fenceLineRE.FindStringSubmatch(l)
		return m != nil && m[2] == "" && m[1][0] == open[1][0] && len(m[1]) >= len(open[1])
	}
	if !closes(lines[last]) {
		return code, false
	}
	for _, l := range lines[first+1 : last] {
		if closes(l) { // a second block, or text after the first
			return code, false
		}
	}
	lines[first], lines[last] = "", ""
	return strings.Join(lines, "\n"), true
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t{"); i >= 0 {
		return s[:i]
	}
	return s
}

// fenceError explains a failed run of a body that holds Markdown fence
// lines but is not one fenced block unfence could unwrap (text outside the
// fence, several blocks, a fence left open, a language other than
// JavaScript), or "" when the body has no fence line or the failure is not
// one such a body causes. Such a body is not JavaScript: the backticks fail
// as a SyntaxError (usually at compile time, before anything ran) or a
// TypeError, a ~~~ line as a SyntaxError or ReferenceError. The run's own
// error follows, its positions in the body as sent.
func fenceError(code string, r *sandbox.Result) string {
	if r.OK || r.TimedOut || r.Busy {
		return ""
	}
	if !strings.HasPrefix(r.Error, "SyntaxError") && !strings.HasPrefix(r.Error, "TypeError") && !strings.HasPrefix(r.Error, "ReferenceError") {
		return ""
	}
	var at []string
	fence, lang := "", ""
	for _, i := range fenceLines(code) {
		if fence == "" {
			m := fenceLineRE.FindStringSubmatch(strings.Split(code, "\n")[i])
			fence, lang = m[1][:3], firstWord(m[2])
		}
		at = append(at, fmt.Sprint(i+1))
	}
	if len(at) == 0 {
		return ""
	}
	where := "line " + at[0]
	if len(at) > 1 {
		if len(at) > 4 {
			at = append(at[:3], "…")
		}
		where = "lines " + strings.Join(at[:len(at)-1], ", ") + " and " + at[len(at)-1]
	}
	what := fmt.Sprintf("the body holds Markdown code fences (%s on %s), so it is not JavaScript", fence, where)
	if len(at) == 1 {
		what = fmt.Sprintf("the body holds a Markdown code fence (%s on %s), so it is not JavaScript", fence, where)
	}
	if !jsLanguages[strings.ToLower(lang)] {
		what += fmt.Sprintf(" (the block is marked %q; tool_search_code runs JavaScript)", lang)
	}
	return what + ": send only the JavaScript body, without the " + fence + " fence and any text around it. The run failed with: " + r.Error
}

// fenceLines returns the indexes (from 0) of the lines of code that are
// Markdown fence lines in the text of the program: not inside a /* */
// comment or a string continued over lines, and for ~~~ not inside a
// template literal either, where a program may hold them (a ``` line
// always ends a template literal). The
// scan knows comments and string and template literals, not regular
// expression literals; it is only used to word an error.
func fenceLines(code string) []int {
	const (
		inCode = iota
		inLineComment
		inBlockComment
		inString // ' or "
		inTemplate
	)
	state, quote := inCode, byte(0)
	var out []int
	line, lineStart := 0, true
	for i := 0; i < len(code); i++ {
		if lineStart {
			lineStart = false
			end := strings.IndexByte(code[i:], '\n')
			if end < 0 {
				end = len(code) - i
			}
			if m := fenceLineRE.FindStringSubmatch(code[i : i+end]); m != nil && (state == inCode || state == inTemplate && m[1][0] == '`') {
				out = append(out, line)
			}
		}
		c := code[i]
		if c == '\n' {
			line++
			lineStart = true
			if state == inLineComment || state == inString {
				state = inCode
			}
			continue
		}
		switch state {
		case inCode:
			switch {
			case c == '/' && i+1 < len(code) && code[i+1] == '/':
				state, i = inLineComment, i+1
			case c == '/' && i+1 < len(code) && code[i+1] == '*':
				state, i = inBlockComment, i+1
			case c == '\'' || c == '"':
				state, quote = inString, c
			case c == '`':
				state = inTemplate
			}
		case inBlockComment:
			if c == '*' && i+1 < len(code) && code[i+1] == '/' {
				state, i = inCode, i+1
			}
		case inString, inTemplate:
			switch {
			case c == '\\':
				i++ // the escaped character (a line continuation's newline counts below as well)
				if i < len(code) && code[i] == '\n' {
					line++
					lineStart = true
				}
			case state == inString && c == quote, state == inTemplate && c == '`':
				state = inCode
			}
		}
	}
	return out
}
