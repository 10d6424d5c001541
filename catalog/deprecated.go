package catalog

import "strings"

// deprecated reports whether a tool's own name, title or description
// marks it deprecated: the word DEPRECATED in capitals ("DEPRECATED: Use
// read_text_file instead.", "[DEPRECATED]", "**DEPRECATED**"), the word
// in brackets ("(Deprecated)", "(Deprecated, use get-context instead)"),
// at the start of a sentence as a label ("Deprecated: …", "Deprecated.
// Use …", reStructuredText's ".. deprecated::"), followed by the tool to
// use instead ("deprecated in favor of X", "deprecated; use X"), or said
// of the tool itself ("This tool is deprecated"). A tool about deprecation
// ("Check if packages are deprecated", "List deprecated APIs") is not
// marked; its parameters' descriptions are not read ("This parameter is
// deprecated" says nothing of the tool).
//
// Trust: the text is the upstream's (untrusted). The mark only lowers the
// tool's own rank (RankParams.Deprecated), so a server that claims its
// tools are deprecated harms only itself.
func deprecated(name, title, desc string) bool {
	for _, s := range [...]string{name, title, desc} {
		if deprecatedText(s) {
			return true
		}
	}
	return false
}

func deprecatedText(s string) bool {
	const word = "deprecated"
	for at := 0; ; {
		i := indexFold(s[at:], word)
		if i < 0 {
			return false
		}
		i += at
		end := i + len(word)
		at = end
		if i > 0 && isWordByte(s[i-1]) || end < len(s) && isWordByte(s[end]) {
			continue // part of a longer word: "deprecatedFlag", "undeprecated"
		}
		if s[i:end] == "DEPRECATED" {
			return true
		}
		before := strings.TrimRight(s[:i], " \t")
		after := strings.TrimLeft(s[end:], " \t")
		rest := strings.TrimLeft(after, ":.;,-—– \t") // after the punctuation
		punct := len(rest) < len(after)
		switch {
		case strings.HasSuffix(before, "(") || strings.HasSuffix(before, "["):
			// "(Deprecated)", "[deprecated]", "(Deprecated, use …)".
			return true
		case sentenceStart(before) && (after == "" || punct):
			// A label: "Deprecated: use …", "Deprecated. …", ".. deprecated:: 2.0".
			return true
		case hasPrefixFold(after, "in favor of") || hasPrefixFold(after, "in favour of"):
			return true
		case punct && useInstead(rest):
			// "deprecated; use read_text_file", "deprecated - use X instead".
			return true
		case saidOfTool(strings.ToLower(before)):
			// "This tool is deprecated", "this endpoint has been deprecated".
			return true
		}
	}
}

// useInstead reports whether s, the text after "deprecated" and its
// punctuation, names what to use instead: "use X instead", "use
// read_text_file" (an identifier), not "Use the name of the package".
func useInstead(s string) bool {
	if !hasPrefixFold(s, "use ") {
		return false
	}
	s = strings.TrimLeft(s[len("use "):], " `'\"")
	sentence := s
	if j := strings.IndexAny(s, ".\n"); j >= 0 && !(j+1 < len(s) && isWordByte(s[j+1])) {
		sentence = s[:j] // a dot inside a name ("fs.readText") does not end it
	}
	if strings.Contains(strings.ToLower(sentence), "instead") {
		return true
	}
	w := sentence
	if j := strings.IndexAny(w, " ,;)"); j >= 0 {
		w = w[:j]
	}
	return strings.ContainsAny(w, "_-/.:`") || w != strings.ToLower(w) && w[1:] != strings.ToLower(w[1:])
}

// deprecatedSubjects are what "this … is deprecated" is said of to mark
// the tool itself.
var deprecatedSubjects = [...]string{"tool", "function", "endpoint", "method", "api", "command", "operation", "action"}

// saidOfTool reports whether lower, the lower-case text before
// "deprecated", ends with "this tool is", "this endpoint has been", …
func saidOfTool(lower string) bool {
	for _, v := range [...]string{" is", " is now", " has been", " has now been", " was"} {
		if !strings.HasSuffix(lower, v) {
			continue
		}
		subj := strings.TrimSuffix(lower, v)
		for _, w := range deprecatedSubjects {
			if strings.HasSuffix(subj, "this "+w) {
				return true
			}
		}
	}
	return false
}

// sentenceStart reports whether text that ends with before starts a
// sentence: nothing before it, or an end of sentence, a line break, a
// list mark or the ".." of a reStructuredText directive.
func sentenceStart(before string) bool {
	if before == "" {
		return true
	}
	switch before[len(before)-1] {
	case '.', '!', '?', '\n', '\r', '*', '-', '>', '#', '|':
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// indexFold is strings.Index of an ASCII lower-case needle, ignoring the
// case of s's ASCII letters.
func indexFold(s, lower string) int {
	for i := 0; i+len(lower) <= len(s); i++ {
		if hasPrefixFold(s[i:], lower) {
			return i
		}
	}
	return -1
}

// hasPrefixFold is strings.HasPrefix of an ASCII lower-case prefix,
// ignoring the case of s's ASCII letters.
func hasPrefixFold(s, lower string) bool {
	return len(s) >= len(lower) && strings.EqualFold(s[:len(lower)], lower)
}
