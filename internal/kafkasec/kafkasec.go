package kafkasec

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SASL mechanisms a Config may name.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
	AWSMSKIAM   = "AWS_MSK_IAM"
)

// Mechanisms are the SASL mechanisms hookstream speaks, as Kafka names them.
var Mechanisms = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer, AWSMSKIAM}

// Config is the security of every Kafka connection of a process. The zero Config is a plain,
// unauthenticated connection (what `hookstream dev`'s embedded Kafka takes).
type Config struct {
	// TLS encrypts the connections; any of the TLS file settings or ServerName implies it.
	TLS bool
	// CAFile is a PEM file of the certificates that may sign the brokers'; empty: the system's.
	CAFile string
	// ServerName is the name the brokers' certificates must bear; empty: each broker's host.
	ServerName string
	// CertFile and KeyFile are the PEM client certificate and its key, for mTLS; both or none.
	CertFile, KeyFile string

	// Mechanism is the SASL mechanism (Mechanisms); empty: no SASL.
	Mechanism string
	// Username is the SASL user (PLAIN, SCRAM; optional for OAUTHBEARER, where it is the
	// authorization id).
	Username string
	// Password, or PasswordFile (a mounted secret, read at each authentication, trailing
	// newline trimmed), is the user's password (PLAIN, SCRAM).
	Password, PasswordFile string
	// OAuthTokenFile holds the OAUTHBEARER token, read at each authentication so that a
	// sidecar can refresh it.
	OAuthTokenFile string
	// AWS are the credentials of AWS_MSK_IAM.
	AWS AWSCredentials
}

// AWSCredentials are the static credentials AWS_MSK_IAM signs with (the standard
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN variables).
type AWSCredentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// UsesTLS reports whether the connections are encrypted: TLS set, or any TLS setting given.
func (c Config) UsesTLS() bool {
	return c.TLS || c.CAFile != "" || c.ServerName != "" || c.CertFile != "" || c.KeyFile != ""
}

// String describes c without its secrets, for the log: "TLS (CA /etc/kafka/ca.pem), SASL
// SCRAM-SHA-512 as hookstream-cdc".
func (c Config) String() string {
	var parts []string
	if c.UsesTLS() {
		var d []string
		if c.CAFile != "" {
			d = append(d, "CA "+c.CAFile)
		} else {
			d = append(d, "system roots")
		}
		if c.ServerName != "" {
			d = append(d, "server name "+c.ServerName)
		}
		if c.CertFile != "" {
			d = append(d, "client certificate "+c.CertFile)
		}
		parts = append(parts, "TLS ("+strings.Join(d, ", ")+")")
	}
	if c.Mechanism != "" {
		s := "SASL " + c.Mechanism
		if c.Username != "" {
			s += " as " + c.Username
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "plaintext, no authentication"
	}
	return strings.Join(parts, ", ")
}

// Validate reports every setting of c that cannot work, without reading any file.
func (c Config) Validate() error {
	var errs []error
	if (c.CertFile == "") != (c.KeyFile == "") {
		errs = append(errs, errors.New("kafka TLS: a client certificate needs its key and a key its certificate (HOOKSTREAM_KAFKA_TLS_CERT_FILE and HOOKSTREAM_KAFKA_TLS_KEY_FILE)"))
	}
	switch c.Mechanism {
	case "":
		if c.Username != "" || c.Password != "" || c.PasswordFile != "" || c.OAuthTokenFile != "" {
			errs = append(errs, errors.New("kafka SASL: credentials given but no mechanism (HOOKSTREAM_KAFKA_SASL_MECHANISM)"))
		}
	case Plain, ScramSHA256, ScramSHA512:
		if c.Username == "" {
			errs = append(errs, fmt.Errorf("kafka SASL %s: no username (HOOKSTREAM_KAFKA_SASL_USERNAME)", c.Mechanism))
		}
		switch {
		case c.Password == "" && c.PasswordFile == "":
			errs = append(errs, fmt.Errorf("kafka SASL %s: no password (HOOKSTREAM_KAFKA_SASL_PASSWORD or HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE)", c.Mechanism))
		case c.Password != "" && c.PasswordFile != "":
			errs = append(errs, fmt.Errorf("kafka SASL %s: both a password and a password file: give one", c.Mechanism))
		}
	case OAuthBearer:
		if c.OAuthTokenFile == "" {
			errs = append(errs, errors.New("kafka SASL OAUTHBEARER: no token file (HOOKSTREAM_KAFKA_SASL_OAUTH_TOKEN_FILE)"))
		}
	case AWSMSKIAM:
		if c.AWS.AccessKeyID == "" || c.AWS.SecretAccessKey == "" {
			errs = append(errs, errors.New("kafka SASL AWS_MSK_IAM: no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"))
		}
	default:
		errs = append(errs, fmt.Errorf("kafka SASL: unknown mechanism %q, want one of %s", c.Mechanism, strings.Join(Mechanisms, ", ")))
	}
	if c.Mechanism != OAuthBearer && c.OAuthTokenFile != "" && c.Mechanism != "" {
		errs = append(errs, fmt.Errorf("kafka SASL %s: an OAuth token file is only for OAUTHBEARER", c.Mechanism))
	}
	return errors.Join(errs...)
}

// Options returns the franz-go options of c: its TLS dialer and SASL mechanism, none for the
// zero Config. It reads every file c names now, so that a file that cannot be read or parsed
// is an error at start naming the file; the password and token files are read again at each
// authentication.
func (c Config) Options() ([]kgo.Opt, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var opts []kgo.Opt
	if c.UsesTLS() {
		tc, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if c.Mechanism != "" {
		m, err := c.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

func (c Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("kafka TLS: CA file: %w", pathOnly(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kafka TLS: CA file %s holds no PEM certificate", c.CAFile)
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" {
		if _, err := os.Stat(c.CertFile); err != nil {
			return nil, fmt.Errorf("kafka TLS: client certificate: %w", pathOnly(err))
		}
		if _, err := os.Stat(c.KeyFile); err != nil {
			return nil, fmt.Errorf("kafka TLS: client key: %w", pathOnly(err))
		}
		// tls.LoadX509KeyPair's errors name what is wrong, never the key's bytes.
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("kafka TLS: client certificate %s with key %s: %w", c.CertFile, c.KeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func (c Config) mechanism() (sasl.Mechanism, error) {
	switch c.Mechanism {
	case Plain, ScramSHA256, ScramSHA512:
		if _, err := c.password(); err != nil {
			return nil, err
		}
	case OAuthBearer:
		if _, err := c.token(); err != nil {
			return nil, err
		}
	}
	switch c.Mechanism {
	case Plain:
		return plain.Plain(func(context.Context) (plain.Auth, error) {
			p, err := c.password()
			return plain.Auth{User: c.Username, Pass: p}, err
		}), nil
	case ScramSHA256:
		return scram.Sha256(c.scramAuth), nil
	case ScramSHA512:
		return scram.Sha512(c.scramAuth), nil
	case OAuthBearer:
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
			t, err := c.token()
			return oauth.Auth{Zid: c.Username, Token: t}, err
		}), nil
	case AWSMSKIAM:
		auth := aws.Auth{AccessKey: c.AWS.AccessKeyID, SecretKey: c.AWS.SecretAccessKey, SessionToken: c.AWS.SessionToken}
		return aws.ManagedStreamingIAM(func(context.Context) (aws.Auth, error) { return auth, nil }), nil
	}
	return nil, fmt.Errorf("kafka SASL: unknown mechanism %q", c.Mechanism)
}

func (c Config) scramAuth(context.Context) (scram.Auth, error) {
	p, err := c.password()
	return scram.Auth{User: c.Username, Pass: p}, err
}

// password is the SASL password: Password, or the content of PasswordFile read now.
func (c Config) password() (string, error) {
	if c.PasswordFile == "" {
		return c.Password, nil
	}
	return readSecret(c.PasswordFile, "password file")
}

// token is the content of OAuthTokenFile, read now.
func (c Config) token() (string, error) {
	return readSecret(c.OAuthTokenFile, "OAuth token file")
}

// readSecret reads a file holding one secret (a Kubernetes secret's file ends in a newline or
// not); its errors name the file, never its content.
func readSecret(path, what string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("kafka SASL: %s: %w", what, pathOnly(err))
	}
	s := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("kafka SASL: %s %s is empty", what, path)
	}
	return s, nil
}

// pathOnly keeps of a file error its operation, path and cause (e.g. "open /x: permission
// denied"); an *os.PathError never holds the file's content.
func pathOnly(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return errors.New("cannot read the file")
}
