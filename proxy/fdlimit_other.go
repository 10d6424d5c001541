//go:build !unix

package proxy

// openFileLimit is 0 (unknown): Windows has no per-process descriptor
// limit of the Unix kind; server.max_connections then defaults to
// maxAutoConnections.
func openFileLimit() int { return 0 }
