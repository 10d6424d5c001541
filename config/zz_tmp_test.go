package config

import (
	"math/rand"
	"os"
	"testing"
	"time"
)

func TestTmpMutate(t *testing.T) {
	data, _ := os.ReadFile("../examples/config.reference.toml")
	r := rand.New(rand.NewSource(1))
	chars := []byte("\"'[]{}=.,#\n\\ $a1")
	var worst time.Duration
	ok := 0
	for n := 0; n < 20000; n++ {
		b := append([]byte(nil), data...)
		for k := 0; k < 1+r.Intn(4); k++ {
			i := r.Intn(len(b))
			switch r.Intn(3) {
			case 0:
				b[i] = chars[r.Intn(len(chars))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			case 2:
				b = append(b[:i], append([]byte{chars[r.Intn(len(chars))]}, b[i:]...)...)
			}
		}
		done := make(chan error, 1)
		st := time.Now()
		go func() { _, err := Parse(b, "x", func(string) (string, bool) { return "v", true }); done <- err }()
		select {
		case err := <-done:
			if err == nil { ok++ }
		case <-time.After(5 * time.Second):
			os.WriteFile("/tmp/hang.toml", b, 0o644)
			t.Fatalf("hang")
		}
		if d := time.Since(st); d > worst { worst = d }
	}
	t.Logf("worst %v, ok %d", worst, ok)
}
