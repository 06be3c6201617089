package kafkasec_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/hookstream/hookstream/internal/kafkasec"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

const secret = "s3cret-Pa55"

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mechanismOf builds c's options into a client and returns its SASL mechanism.
func mechanismOf(t *testing.T, c kafkasec.Config) sasl.Mechanism {
	t.Helper()
	opts, err := c.Options()
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ms, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
	if len(ms) != 1 {
		t.Fatalf("%s: %d SASL mechanisms, want 1", c, len(ms))
	}
	return ms[0]
}

// firstMessage is what the mechanism sends the broker first.
func firstMessage(t *testing.T, m sasl.Mechanism) string {
	t.Helper()
	_, msg, err := m.Authenticate(context.Background(), "b-1.kafka.eu-west-1.amazonaws.com:9098")
	if err != nil {
		t.Fatalf("%s: %v", m.Name(), err)
	}
	return string(msg)
}

// Every mechanism is built with franz-go's own package and sends the credentials it was given.
func TestEveryMechanism(t *testing.T) {
	for _, c := range []struct {
		cfg  kafkasec.Config
		want []string // in the first message
	}{
		{kafkasec.Config{Mechanism: kafkasec.Plain, Username: "u1", Password: secret}, []string{"\x00u1\x00" + secret}},
		{kafkasec.Config{Mechanism: kafkasec.ScramSHA256, Username: "u2", Password: secret}, []string{"n,,n=u2,r="}},
		{kafkasec.Config{Mechanism: kafkasec.ScramSHA512, Username: "u3", Password: secret}, []string{"n,,n=u3,r="}},
		{kafkasec.Config{Mechanism: kafkasec.OAuthBearer, OAuthTokenFile: write(t, "token", "tok-1\n")}, []string{"auth=Bearer tok-1\x01"}},
		{kafkasec.Config{Mechanism: kafkasec.AWSMSKIAM, AWS: kafkasec.AWSCredentials{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: secret}},
			[]string{`"action":"kafka-cluster:Connect"`, "AKIAEXAMPLE"}},
	} {
		m := mechanismOf(t, c.cfg)
		if m.Name() != c.cfg.Mechanism {
			t.Errorf("mechanism %s, want %s", m.Name(), c.cfg.Mechanism)
		}
		msg := firstMessage(t, m)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: first message %q lacks %q", c.cfg.Mechanism, msg, w)
			}
		}
	}
}

// The password file is read at start and again at each authentication, its trailing newline
// trimmed: a rotated secret is used without a restart.
func TestPasswordFileIsReadAtEachAuthentication(t *testing.T) {
	p := write(t, "password", "first\n")
	m := mechanismOf(t, kafkasec.Config{Mechanism: kafkasec.Plain, Username: "u", PasswordFile: p})
	if got := firstMessage(t, m); got != "\x00u\x00first" {
		t.Fatalf("first message %q", got)
	}
	if err := os.WriteFile(p, []byte("second\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := firstMessage(t, m); got != "\x00u\x00second" {
		t.Fatalf("after the rotation: %q", got)
	}
}

func TestOAuthTokenFileIsReadAtEachAuthentication(t *testing.T) {
	p := write(t, "token", "tok-1")
	m := mechanismOf(t, kafkasec.Config{Mechanism: kafkasec.OAuthBearer, OAuthTokenFile: p})
	firstMessage(t, m)
	if err := os.WriteFile(p, []byte("tok-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := firstMessage(t, m); !strings.Contains(got, "Bearer tok-2\x01") {
		t.Fatalf("after the refresh: %q", got)
	}
	// A token file removed later fails the authentication, naming the file only.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Authenticate(context.Background(), "h:1"); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("removed token file: %v", err)
	}
}

// A Config that cannot work is refused at start with every reason, naming the setting or the
// file, never a secret or a file's content.
func TestRefusedAtStartWithoutSecrets(t *testing.T) {
	garbage := write(t, "ca.pem", "not a certificate "+secret)
	empty := write(t, "password", "\n")
	missing := filepath.Join(t.TempDir(), "nope.pem")
	for _, c := range []struct {
		name string
		cfg  kafkasec.Config
		want []string
	}{
		{"unknown mechanism", kafkasec.Config{Mechanism: "SCRAM-SHA-1", Username: "u", Password: secret},
			[]string{`unknown mechanism "SCRAM-SHA-1"`, "SCRAM-SHA-512"}},
		{"no username", kafkasec.Config{Mechanism: kafkasec.ScramSHA512, Password: secret}, []string{"no username (HOOKSTREAM_KAFKA_SASL_USERNAME)"}},
		{"no password", kafkasec.Config{Mechanism: kafkasec.Plain, Username: "u"}, []string{"no password"}},
		{"both passwords", kafkasec.Config{Mechanism: kafkasec.Plain, Username: "u", Password: secret, PasswordFile: empty}, []string{"give one"}},
		{"credentials, no mechanism", kafkasec.Config{Username: "u", Password: secret}, []string{"no mechanism"}},
		{"no token file", kafkasec.Config{Mechanism: kafkasec.OAuthBearer}, []string{"no token file"}},
		{"no AWS credentials", kafkasec.Config{Mechanism: kafkasec.AWSMSKIAM, AWS: kafkasec.AWSCredentials{SecretAccessKey: secret}},
			[]string{"AWS_ACCESS_KEY_ID"}},
		{"cert without key", kafkasec.Config{CertFile: missing}, []string{"needs its key"}},
		{"key without cert", kafkasec.Config{KeyFile: missing}, []string{"needs its key"}},
		{"CA file missing", kafkasec.Config{CAFile: missing}, []string{"CA file: open " + missing + ": no such file"}},
		{"CA file garbage", kafkasec.Config{CAFile: garbage}, []string{"CA file " + garbage + " holds no PEM certificate"}},
		{"password file missing", kafkasec.Config{Mechanism: kafkasec.ScramSHA256, Username: "u", PasswordFile: missing},
			[]string{"password file: open " + missing}},
		{"password file empty", kafkasec.Config{Mechanism: kafkasec.ScramSHA256, Username: "u", PasswordFile: empty},
			[]string{"password file " + empty + " is empty"}},
		{"client key garbage", kafkasec.Config{CertFile: garbage, KeyFile: garbage}, []string{"client certificate " + garbage}},
	} {
		_, err := c.cfg.Options()
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(c.cfg.String(), secret) {
			t.Errorf("%s: a secret in %q or %q", c.name, err, c.cfg.String())
		}
	}
}

func TestStringNamesNoSecret(t *testing.T) {
	c := kafkasec.Config{CAFile: "/etc/kafka/ca.pem", Mechanism: kafkasec.ScramSHA512, Username: "hookstream-cdc", Password: secret}
	if got, want := c.String(), "TLS (CA /etc/kafka/ca.pem), SASL SCRAM-SHA-512 as hookstream-cdc"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	if got := (kafkasec.Config{}).String(); got != "plaintext, no authentication" {
		t.Errorf("zero Config: %q", got)
	}
	if opts, err := (kafkasec.Config{}).Options(); err != nil || len(opts) != 0 {
		t.Errorf("zero Config: %d options, %v", len(opts), err)
	}
}

// pemOf is the CA's certificate as a PEM file.
func pemOf(t *testing.T, ca *testenv.CA) string {
	return write(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})))
}

// ping connects with c to brokers and returns the explained error.
func ping(t *testing.T, c kafkasec.Config, brokers []string) error {
	t.Helper()
	opts, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Explain(cl.Ping(ctx))
}

// Against a broker that wants TLS and SCRAM, the right settings connect; an untrusted CA and
// plaintext each fail with a reason that names the cause and no secret. (kfake closes the
// connection on a wrong password where Kafka answers SASL_AUTHENTICATION_FAILED: the secured
// lane, internal/testkit/secure, checks that reason on a real broker.)
func TestExplainOnASecuredBroker(t *testing.T) {
	ca := testenv.NewCA(t, "kafkasec test CA")
	server := ca.Server(t)
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(),
		kfake.Superuser(kafkasec.ScramSHA512, "admin", "admin-pass"),
		kfake.User(kafkasec.ScramSHA512, "hookstream-cdc", secret),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{server.TLS}, ClientCAs: ca.Pool, ClientAuth: tls.VerifyClientCertIfGiven}))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	brokers := fake.ListenAddrs()
	caFile := pemOf(t, ca)
	good := kafkasec.Config{CAFile: caFile, Mechanism: kafkasec.ScramSHA512, Username: "hookstream-cdc", Password: secret}
	if err := ping(t, good, brokers); err != nil {
		t.Fatalf("the right settings: %v", err)
	}

	otherCA := good
	otherCA.CAFile = pemOf(t, testenv.NewCA(t, "another CA"))
	plain := kafkasec.Config{Mechanism: kafkasec.ScramSHA512, Username: "hookstream-cdc", Password: secret}
	for _, c := range []struct {
		name string
		cfg  kafkasec.Config
		want string
	}{
		{"untrusted CA", otherCA, "TLS handshake: certificate signed by unknown authority"},
		{"no TLS", plain, "connection closed by the broker"},
	} {
		err := ping(t, c.cfg, brokers)
		var explained *kafkasec.Error
		if err == nil || !errors.As(err, &explained) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want an explained error starting %q", c.name, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the password in %q", c.name, err)
		}
	}
}

// The errors franz-go returns for a refused authentication or authorization, as a real broker
// answers them, are explained with the user and the broker's message.
func TestExplainKafkaErrors(t *testing.T) {
	c := kafkasec.Config{Mechanism: kafkasec.ScramSHA512, Username: "hookstream-cdc", Password: secret}
	for _, e := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: %s", kerr.SaslAuthenticationFailed, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"),
			"SASL authentication failed for user hookstream-cdc (SCRAM-SHA-512): Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"},
		{kerr.SaslAuthenticationFailed, "SASL authentication failed for user hookstream-cdc (SCRAM-SHA-512)"},
		{kerr.UnsupportedSaslMechanism, "SASL: the broker does not accept the mechanism SCRAM-SHA-512"},
		{kerr.TopicAuthorizationFailed, "authorization failed for user hookstream-cdc: TOPIC_AUTHORIZATION_FAILED"},
		{kerr.TransactionalIDAuthorizationFailed, "authorization failed for user hookstream-cdc: TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
	} {
		got := c.Explain(e.err)
		if !strings.HasPrefix(got.Error(), e.want) || !errors.Is(got, e.err) {
			t.Errorf("Explain(%v) = %q, want it to start %q and wrap the error", e.err, got, e.want)
		}
	}
	other := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	if got := c.Explain(other); got != other {
		t.Errorf("another error explained: %v", got)
	}
}
