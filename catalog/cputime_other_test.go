//go:build !unix

package catalog

// processCPU is not measured on this OS (see cputime_unix_test.go).
func processCPU() int64 { return 0 }
