// Package pathq quotes file paths for error messages and logs as the user
// wrote them: `"C:\Users\me\config.toml"`, not Go's %q form with every
// backslash doubled (`"C:\\Users\\me\\config.toml"`), which on Windows
// names a path nobody typed. A path that holds a double
// quote, a control character or invalid UTF-8 is quoted with
// strconv.Quote instead, so the message stays one unambiguous line.
package pathq

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Quote returns p between double quotes, as written when every rune of p
// is printable (unicode.IsPrint, plus the space) and p holds no double
// quote; otherwise strconv.Quote(p).
func Quote(p string) string {
	if !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if r == '"' || !unicode.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	return `"` + p + `"`
}
