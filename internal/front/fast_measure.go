//go:build measure

package front

import "os"

// A binary built with -tags measure reads Fast from the environment:
// MCPTS_FAST=off turns every fast path off, so one binary measures both
// sides of the switch (docs/performance.md). Release builds have no such
// variable.
func init() {
	if os.Getenv("MCPTS_FAST") == "off" {
		Fast = false
	}
}
