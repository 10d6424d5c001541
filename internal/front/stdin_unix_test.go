//go:build unix

package front

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFrontStdinHelper is the child process of the tests below (it skips
// unless started by them): it reads one byte through Stdin, as the
// stdio front does, and prints whether stdin was reopened and what it read.
func TestFrontStdinHelper(t *testing.T) {
	if os.Getenv("PROXY_FRONT_STDIN_HELPER") != "1" {
		t.Skip("child process of TestFrontStdinLeavesSharedStdinBlocking")
	}
	f := Stdin()
	b := make([]byte, 1)
	n, err := f.Read(b)
	fmt.Printf("reopened=%v read=%q err=%v\n", f != os.Stdin, b[:n], err)
	os.Exit(0)
}

// runStdinHelper starts TestFrontStdinHelper with stdin as its standard
// input (the same open file description this process holds) and returns
// its line.
func runStdinHelper(t *testing.T, stdin *os.File) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFrontStdinHelper$")
	cmd.Env = append(os.Environ(), "PROXY_FRONT_STDIN_HELPER=1")
	cmd.Stdin = stdin
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v (output %q)", err, out)
	}
	return strings.TrimSpace(string(out))
}

func nonblocking(t *testing.T, fd int) bool {
	t.Helper()
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatalf("fcntl F_GETFL: %v", err)
	}
	return fl&unix.O_NONBLOCK != 0
}

// TestFrontStdinLeavesSharedStdinBlocking: a proxy whose stdin pipe is
// shared with another reader (a wrapper shell's `read` after it, a
// `serve || fallback` line) reads its input without putting the shared
// open file description in non-blocking mode, so the other reader's
// blocking read(2) still waits for data instead of failing with EAGAIN.
// On Linux the pipe is still read through the poller (a
// new description of /proc/self/fd/0); a socket keeps os.Stdin.
func TestFrontStdinLeavesSharedStdinBlocking(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // blocking ends, as a shell makes them
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(p[0]), "stdin-r"), os.NewFile(uintptr(p[1]), "stdin-w")
	defer r.Close()
	defer w.Close()
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	got := runStdinHelper(t, r)
	want := fmt.Sprintf("reopened=%v read=\"x\" err=<nil>", runtime.GOOS == "linux")
	if got != want {
		t.Fatalf("helper printed %q, want %q", got, want)
	}
	if nonblocking(t, p[0]) {
		t.Fatal("the shared stdin pipe was left in non-blocking mode: a sibling's read(2) fails with EAGAIN")
	}
	// The sibling's blocking read waits for data written later.
	read := make(chan string, 1)
	go func() {
		b := make([]byte, 8)
		n, err := syscall.Read(p[0], b)
		read <- fmt.Sprintf("%q %v", b[:n], err)
	}()
	if _, err := w.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if s := <-read; s != `"y" <nil>` {
		t.Fatalf("sibling read %s, want \"y\" <nil>", s)
	}

	// A socket (some launchers) is not reopened and keeps its mode.
	sp, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	s0, s1 := os.NewFile(uintptr(sp[0]), "sock0"), os.NewFile(uintptr(sp[1]), "sock1")
	defer s0.Close()
	defer s1.Close()
	if _, err := s1.Write([]byte("z")); err != nil {
		t.Fatal(err)
	}
	if got := runStdinHelper(t, s0); got != `reopened=false read="z" err=<nil>` {
		t.Fatalf("socket stdin: helper printed %q", got)
	}
	if nonblocking(t, sp[0]) {
		t.Fatal("the shared stdin socket was left in non-blocking mode")
	}
}
