package pathq

import "testing"

// TestQuote runs on every OS: Windows paths are plain strings here.
func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`C:\Users\me\config.toml`, `"C:\Users\me\config.toml"`},
		{`\\server\share\pins.json`, `"\\server\share\pins.json"`},
		{"/srv/mcp/config.toml", `"/srv/mcp/config.toml"`},
		{"C:\\Program Files\\mcp\\é.toml", "\"C:\\Program Files\\mcp\\é.toml\""},
		{`C:\odd"name`, `"C:\\odd\"name"`}, // a quote: Go quoting
		{"/tmp/a\nb", `"/tmp/a\nb"`},       // a control character
		{"/tmp/\xff", `"/tmp/\xff"`},       // invalid UTF-8
		{"", `""`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
