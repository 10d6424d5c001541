//go:build race

package sandbox

// raceEnabled: the race runtime needs far more memory in the worker.
const raceEnabled = true
