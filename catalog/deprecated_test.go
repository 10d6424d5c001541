package catalog

import (
	"slices"
	"testing"
)

// What marks a tool deprecated, from real tool lists (server-filesystem,
// the bench catalogs), and text about deprecation that does not.
func TestDeprecatedMark(t *testing.T) {
	for _, c := range []struct {
		name, title, desc string
		want              bool
	}{
		{"read_file", "", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.", true},
		{"lookup_go_doc", "", "[DEPRECATED] Use describe_go_package instead. Get a brief description", true},
		{"billing_createServiceOrderV1", "", "Create a new service order. \n\n**DEPRECATED**\n\nTo purchase a domain, use …", true},
		{"close_tab", "", "Close a tab by index. STRONGLY DEPRECATED: Use close_tab_by_id instead.", true},
		{"packages/track (Deprecated)", "", "Get tracking information of specific parcels", true},
		{"get-full-dom", "", "Get the full DOM of the current page. (Deprecated, use get-context instead)", true},
		{"delete_app", "", "Confirm and execute application deletion. .. deprecated:: This tool exists for backward compatibility", true},
		{"old_search", "", "Deprecated: use search_v2.", true},
		{"old_search", "Old search (deprecated)", "Searches the index.", true},
		{"fetch_v1", "", "Fetches a page; deprecated in favor of fetch.", true},
		{"fetch_v1", "", "Fetches a page. This tool is deprecated.", true},
		{"fetch_v1", "", "Fetches a page. This endpoint has been deprecated - use fetch_v2", true},
		{"fetch_v1", "", "Fetches a page (deprecated; use fetchPage).", true},
		{"npmDeprecated", "", "Check if packages are deprecated", false},
		{"list_apis", "", "List deprecated APIs in the project and where they are called.", false},
		{"lint", "", "Find deprecated, unused or unsafe code.", false},
		{"pkg_info", "", "Whether a package is deprecated. Use the name of the package as published.", false},
		{"search_events", "", "Search events. The include_kube parameter is deprecated and ignored.", false},
		{"undeprecate", "", "Mark a version as undeprecated.", false},
		{"read_text_file", "", "Read the complete contents of a file from the file system as text.", false},
	} {
		if got := deprecated(c.name, c.title, c.desc); got != c.want {
			t.Errorf("deprecated(%q, %q, %q) = %v, want %v", c.name, c.title, c.desc, got, c.want)
		}
	}
}

// server-filesystem's read_file says it is deprecated and names
// read_text_file instead. Its shorter text matches "read a file" better,
// so without RankParams.Deprecated it is the first hit; with it the
// replacement comes first, read_file is still listed, and a query that
// names read_file still finds it first.
func TestDeprecatedRanksBelowReplacement(t *testing.T) {
	tools := append([][3]string{
		{"filesystem:read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
			`{"type":"object","properties":{"path":{"type":"string"},"tail":{"description":"If provided, returns only the last N lines of the file","type":"number"},"head":{"description":"If provided, returns only the first N lines of the file","type":"number"}},"required":["path"]}`},
		{"filesystem:read_text_file", "Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories.",
			`{"type":"object","properties":{"path":{"type":"string"},"tail":{"description":"If provided, returns only the last N lines of the file","type":"number"},"head":{"description":"If provided, returns only the first N lines of the file","type":"number"}},"required":["path"]}`},
		{"filesystem:list_directory", "Get a detailed listing of all files and directories in a specified path.", `{"type":"object","properties":{"path":{"type":"string"}}}`},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	hits := top(NewIndexWithParams(es, p), "read a file", 5)
	at := func(id string) int { return slices.Index(hits, id) }
	if at("mcp:filesystem:read_text_file") < 0 || at("mcp:filesystem:read_file") < 0 || at("mcp:filesystem:read_text_file") > at("mcp:filesystem:read_file") {
		t.Errorf("read a file: hits %v, want read_text_file before the deprecated read_file, both listed", hits)
	}
	if got := top(NewIndexWithParams(es, p), "read_file", 1); !slices.Equal(got, []string{"mcp:filesystem:read_file"}) {
		t.Errorf("read_file: first hit %v, want the tool it names", got)
	}
	p.Deprecated = 1
	if got := top(NewIndexWithParams(es, p), "read a file", 1); !slices.Equal(got, []string{"mcp:filesystem:read_file"}) {
		t.Errorf("without the deprecation factor the first hit is %v, not read_file: the test no longer shows what it changes", got)
	}
}
