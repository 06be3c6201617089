package kafkasec

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Explain returns err, an error of a client with the security c, as a reason an operator can
// act on when it is a handshake or authentication failure: "SASL authentication failed for
// user hookstream-cdc (SCRAM-SHA-512): <the broker's message>", "TLS handshake: certificate
// signed by unknown authority", "authorization failed: ...". Other errors (a broker away, a
// timeout) come back as they are. The result wraps err, and names no secret: franz-go's and
// the broker's messages hold none, and the user name is no secret.
func (c Config) Explain(err error) error {
	if err == nil {
		return nil
	}
	user := ""
	if c.Username != "" {
		user = " for user " + c.Username
	}
	var (
		unknownCA   x509.UnknownAuthorityError
		hostname    x509.HostnameError
		invalid     x509.CertificateInvalidError
		verify      *tls.CertificateVerificationError
		alert       tls.AlertError
		recordHdr   tls.RecordHeaderError
		kafkaErr    *kerr.Error
		errNotTLSed = !c.UsesTLS()
	)
	switch {
	case errors.As(err, &unknownCA):
		return &Error{"TLS handshake: certificate signed by unknown authority (is HOOKSTREAM_KAFKA_TLS_CA_FILE the brokers' CA?)", err}
	case errors.As(err, &hostname):
		return &Error{fmt.Sprintf("TLS handshake: %v (HOOKSTREAM_KAFKA_TLS_SERVER_NAME sets the name expected)", hostname), err}
	case errors.As(err, &invalid):
		return &Error{"TLS handshake: " + invalid.Error(), err}
	case errors.As(err, &verify):
		return &Error{"TLS handshake: " + verify.Err.Error(), err}
	case errors.As(err, &alert):
		// The broker refused the handshake: most often mTLS without an accepted client
		// certificate.
		return &Error{fmt.Sprintf("TLS handshake refused by the broker: %v (a client certificate it accepts?)", alert), err}
	case errors.As(err, &recordHdr):
		return &Error{"TLS handshake: the broker does not speak TLS on this port", err}
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return &Error{fmt.Sprintf("SASL authentication failed%s (%s)%s", user, c.Mechanism, brokerMessage(err)), err}
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return &Error{fmt.Sprintf("SASL: the broker does not accept the mechanism %s%s", c.Mechanism, brokerMessage(err)), err}
	case errors.Is(err, kerr.IllegalSaslState):
		return &Error{fmt.Sprintf("SASL%s (%s): the broker expected another step of the handshake (does the listener want SASL?)", user, c.Mechanism), err}
	case errors.As(err, &kafkaErr) && (kafkaErr == kerr.TopicAuthorizationFailed || kafkaErr == kerr.GroupAuthorizationFailed ||
		kafkaErr == kerr.TransactionalIDAuthorizationFailed || kafkaErr == kerr.ClusterAuthorizationFailed):
		return &Error{fmt.Sprintf("authorization failed%s: %s (the ACLs of docs/operations.md)", user, kafkaErr.Error()), err}
	case errNotTLSed && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)):
		// A plaintext request to a TLS or SASL listener is answered by closing the connection
		// (as is one in flight when a broker stops, hence the "if").
		return &Error{fmt.Sprintf("connection closed by the broker (%v); if its listener wants TLS or SASL, set HOOKSTREAM_KAFKA_TLS or HOOKSTREAM_KAFKA_SASL_MECHANISM", err), err}
	}
	return err
}

// brokerMessage is ": " and the broker's own message in err (franz-go writes "<CODE>: <code's
// text>: <message>"), or nothing when it carries none.
func brokerMessage(err error) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return ""
	}
	_, msg, ok := strings.Cut(err.Error(), ke.Error()+": ")
	if !ok || msg == "" {
		return ""
	}
	return ": " + msg
}

// Error is a handshake or authentication failure explained (Explain): Error says what failed
// and the setting to look at, Unwrap gives the client's error.
type Error struct {
	reason string
	err    error
}

func (e *Error) Error() string { return e.reason }
func (e *Error) Unwrap() error { return e.err }
