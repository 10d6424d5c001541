package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ownCause is a failed connection attempt's phase ("initialize",
// "tools/list") and error in the proxy's own fixed words, for
// Status.Cause, which a model reads (session.Unavailable): "initialize:
// connection refused", "tools/list: answered with error code -32601".
//
// It never quotes the error's text: that text may carry what the upstream
// sent (a JSON-RPC error message, a protocol version, an HTTP error page:
// untrusted upstream text, which must not reach the model as the proxy's
// own words) or the configured URL (whose query may hold a key: the
// operator's secret, which must not reach the model or its provider's
// logs). The whole error stays in Status.Err and the log for the operator.
func ownCause(phase string, err error) string {
	return phase + ": " + errorKind(err)
}

// errorKind names err's kind from its type alone (see ownCause).
func errorKind(err error) string {
	var (
		wire    *jsonrpc.Error
		dns     *net.DNSError
		op      *net.OpError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return "timed out"
	case errors.As(err, &dns):
		return "host not found"
	case isConnRefused(err):
		return "connection refused"
	case errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid), errors.As(err, &record):
		return "TLS handshake failed"
	case errors.As(err, &op):
		return "network error (" + op.Op + ")"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.As(err, &wire):
		// After the connection kinds: the proxy's own errRejected
		// (httpconn.go, -32005) wraps the error that stopped a POST
		// ("rejected by transport: POST initialize: <dial error>"), and
		// a refused connection is not an answer.
		return fmt.Sprintf("answered with error code %d", wire.Code)
	default:
		return "failed (the proxy's log has the details)"
	}
}
