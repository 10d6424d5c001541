package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// releaseTags reads the build tags the release archives are built with (.goreleaser.yaml).
func releaseTags(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*-\s*-tags=(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatal(".goreleaser.yaml: no -tags=... build flag")
	}
	return string(m[1])
}

// The release binary links the Go linker's dead-method elimination on: no function reachable
// in it looks methods up by reflection (reflect.Type.Method, reflect.Value.Method, a
// MethodByName with a computed name, text/template), which would make the linker keep every
// exported method of every type that can end up in an interface, whether called or not
// (about 14 MB of the binary: the state store client's command builders alone are 4 MB of
// code). The goja copy in third_party drops its method lookup; gRPC, linked by the OTLP
// exporter, leaves out golang.org/x/net/trace (html/template) under the grpcnotrace tag.
// The container builds must use the same tags.
func TestReleaseBuildKeepsDeadMethodElimination(t *testing.T) {
	if testing.Short() {
		t.Skip("links the whole binary")
	}
	tags := releaseTags(t)
	for _, f := range []string{"Dockerfile", "scripts/container.sh"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("-tags "+tags+" ")) {
			t.Errorf("%s: its go build does not use the release tags %q (.goreleaser.yaml)", f, tags)
		}
	}
	out := filepath.Join(t.TempDir(), "mcp-toolsearch")
	cmd := exec.Command("go", "build", "-tags", tags, "-ldflags=-dumpdep", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v\n%s", err, tail(stderr.Bytes(), 2000))
	}
	if stderr.Len() == 0 {
		t.Fatal("go build -ldflags=-dumpdep printed nothing: cannot tell which symbols are kept")
	}
	// -dumpdep prints one "from -> to" line per symbol the linker keeps, the first time it
	// reaches it; a symbol that looks methods up by reflection carries "<ReflectMethod>".
	var culprits []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		for _, side := range strings.SplitN(sc.Text(), " -> ", 2) {
			if name, ok := strings.CutSuffix(side, " <ReflectMethod>"); ok && !seen[name] {
				seen[name] = true
				culprits = append(culprits, name)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(culprits) > 0 {
		t.Fatalf("the release build reaches functions that look methods up by reflection, so the linker keeps every exported method: %s", strings.Join(culprits, ", "))
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
