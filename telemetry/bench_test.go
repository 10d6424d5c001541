package telemetry

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

var benchCall = CallRecord{ID: "mcp:big:tool_0042", Upstream: "big", Mode: "code", ViaBridge: true,
	DurationMs: 1.5, Outcome: OutcomeOK, BytesIn: 60, BytesOut: 900, Args: json.RawMessage(`{"title":"Crash on start"}`)}

// BenchmarkCallToFile measures one Session.Call written to a session-log
// file (one write(2) per record) with metrics enabled.
func BenchmarkCallToFile(b *testing.B) {
	r, err := NewRecorder(filepath.Join(b.TempDir(), "log.jsonl"), false, NewMetrics())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	s := r.StartSession(SessionInfo{ID: "bench", Mode: "code"})
	b.ReportAllocs()
	for b.Loop() {
		s.Call(benchCall)
	}
}

// BenchmarkCallMemoryOnly measures Session.Call with no log file (path "").
func BenchmarkCallMemoryOnly(b *testing.B) {
	r, _ := NewRecorder("", false, NewMetrics())
	s := r.StartSession(SessionInfo{ID: "bench", Mode: "code"})
	b.ReportAllocs()
	for b.Loop() {
		s.Call(benchCall)
	}
}

// BenchmarkParseLog measures ParseLog over a log of 100 sessions of 100
// events each; b.SetBytes reports throughput.
func BenchmarkParseLog(b *testing.B) {
	path := filepath.Join(b.TempDir(), "log.jsonl")
	r, err := NewRecorder(path, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		s := r.StartSession(SessionInfo{Mode: "code"})
		for j := 0; j < 33; j++ {
			s.Search("code", "q", 8, true)
			s.Describe("code", "mcp:big:tool_0042", true, true)
			s.Call(benchCall)
		}
		s.End()
	}
	r.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseLog(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
