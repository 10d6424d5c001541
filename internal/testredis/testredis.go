// Package testredis starts a real redis-server (Debian's, installed by
// scripts/install-test-deps.sh) for a test: its own loopback port and
// temporary folder, no persistence, stopped when the test ends. Without
// redis-server on PATH the test is skipped, and fails under CI=true.
package testredis

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testport"
)

// Server is one redis-server process.
type Server struct {
	t        testing.TB
	bin, dir string
	Port     int
	Password string
	Persist  bool
	// TLS: the server listens with TLS only; CAFile verifies it.
	TLS    bool
	CAFile string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Options of Start.
type Options struct {
	Password string
	TLS      bool
	// Persist: an append-only file written at every command, so a
	// server killed and started again has its data back.
	Persist bool
}

// Start starts a redis-server; it is stopped at the test's end.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if runtime.GOOS == "windows" {
		// Debian's redis-server has no Windows build; the store tests run
		// on the Unix builds (the Windows one is the same statestore code).
		t.Skip("redis-server: no Windows build to start here; the shared-store tests run on Unix")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server not found in PATH (scripts/install-test-deps.sh installs Debian's redis-server with apt-get)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), Port: testport.Free(t), Password: o.Password, TLS: o.TLS, Persist: o.Persist}
	if o.TLS {
		s.makeCerts()
	}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the store URL of the server (redis:// or rediss://).
func (s *Server) URL() string {
	scheme := "redis"
	if s.TLS {
		scheme = "rediss"
	}
	auth := ""
	if s.Password != "" {
		auth = ":" + s.Password + "@"
	}
	return fmt.Sprintf("%s://%s127.0.0.1:%d/0", scheme, auth, s.Port)
}

// Start starts the server again after Stop (same port; empty unless
// Persist).
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	args := []string{"--bind", "127.0.0.1", "--dir", s.dir, "--save", "", "--daemonize", "no", "--loglevel", "warning"}
	if s.Persist {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if s.Password != "" {
		args = append(args, "--requirepass", s.Password)
	}
	if s.TLS {
		args = append(args, "--port", "0", "--tls-port", fmt.Sprint(s.Port),
			"--tls-cert-file", filepath.Join(s.dir, "server.pem"), "--tls-key-file", filepath.Join(s.dir, "server.key"),
			"--tls-ca-cert-file", s.CAFile, "--tls-auth-clients", "no")
	} else {
		args = append(args, "--port", fmt.Sprint(s.Port))
	}
	cmd := exec.Command(s.bin, args...)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	var log strings.Builder
	var lmu sync.Mutex
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lmu.Lock()
			log.WriteString(sc.Text() + "\n")
			lmu.Unlock()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			lmu.Lock()
			defer lmu.Unlock()
			s.t.Fatalf("redis-server did not listen on port %d within 10s:\n%s", s.Port, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd = cmd
}

// Stop kills the server (SIGKILL: a crash, nothing saved).
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// makeCerts writes a CA (ca.pem, CAFile) and a server certificate for
// 127.0.0.1 signed by it (server.pem, server.key).
func (s *Server) makeCerts() {
	t := s.t
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "testredis CA"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(s.dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s.CAFile = write("ca.pem", "CERTIFICATE", caDER)
	write("server.pem", "CERTIFICATE", der)
	write("server.key", "EC PRIVATE KEY", kb)
}
