package secure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/kafkasec"
	"github.com/hookstream/hookstream/internal/testkit/localinfra"
)

// scriptTimeout bounds one call of kafka.sh: formatting and starting a JVM on a busy 2-core
// machine.
const scriptTimeout = 3 * time.Minute

// Broker is a running secured node started by deploy/kafka/kafka.sh secure.
type Broker struct {
	scripts localinfra.Scripts
	port    int
	dir     string // the node's state: tls/, users/
	guard   io.Closer
}

// Start starts a secured node on free loopback ports with its data under dir (certificates and
// passwords made on first use), sharing the checkout's broker jars. log gets the script's
// output. A guard process stops the node if this program dies without Stop.
func Start(ctx context.Context, repo, dir string, log io.Writer) (*Broker, error) {
	port, err := localinfra.FreePorts(2)
	if err != nil {
		return nil, fmt.Errorf("secure: %w", err)
	}
	b := &Broker{port: port, dir: filepath.Join(dir, "kafka-secure"), scripts: localinfra.Scripts{Repo: repo, Dir: dir, Log: log,
		Timeout: scriptTimeout, Vars: []string{fmt.Sprintf("KAFKA_SECURE_PORT=%d", port)}}}
	cmd := exec.Command("bash", "-c", `cat >/dev/null; exec bash "$0" secure down`, b.scripts.Path("kafka/kafka.sh"))
	cmd.Env = b.scripts.Env()
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if b.guard, err = localinfra.StartGuard(cmd); err != nil {
		return nil, fmt.Errorf("secure: %w", err)
	}
	if _, err := b.scripts.Run(ctx, "kafka/kafka.sh", "secure", "up"); err != nil {
		_ = b.Stop()
		return nil, fmt.Errorf("secure: %w", err)
	}
	return b, nil
}

// Addr is the SASL_SSL listener's address.
func (b *Broker) Addr() string { return fmt.Sprintf("127.0.0.1:%d", b.port) }

// CAFile is the PEM file of the CA that signed the broker's certificate.
func (b *Broker) CAFile() string { return filepath.Join(b.dir, "tls", "ca.pem") }

// PasswordFile is the file holding user's password.
func (b *Broker) PasswordFile(user string) string {
	return filepath.Join(b.dir, "users", user+".password")
}

// Security is how user connects: TLS trusting the broker's CA, SCRAM-SHA-512 with its password
// file.
func (b *Broker) Security(user string) kafkasec.Config {
	return kafkasec.Config{CAFile: b.CAFile(), Mechanism: kafkasec.ScramSHA512, Username: user, PasswordFile: b.PasswordFile(user)}
}

// Vars are the HOOKSTREAM_* variables of a process connecting as user.
func (b *Broker) Vars(user string) map[string]string {
	return map[string]string{
		"HOOKSTREAM_KAFKA_BROKERS":            b.Addr(),
		"HOOKSTREAM_KAFKA_TLS_CA_FILE":        b.CAFile(),
		"HOOKSTREAM_KAFKA_SASL_MECHANISM":     kafkasec.ScramSHA512,
		"HOOKSTREAM_KAFKA_SASL_USERNAME":      user,
		"HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE": b.PasswordFile(user),
	}
}

// Client is a franz-go client of user with opts.
func (b *Broker) Client(user string, opts ...kgo.Opt) (*kgo.Client, error) {
	sec, err := b.Security(user).Options()
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(b.Addr())}, sec...), opts...)...)
}

// Stop stops the node (SIGTERM, SIGKILL after 30 s) and the guard.
func (b *Broker) Stop() error {
	_, err := b.scripts.Run(context.Background(), "kafka/kafka.sh", "secure", "down")
	return errors.Join(err, b.guard.Close())
}

// Principal is the ACL principal of user.
func Principal(user string) string { return "User:" + strings.TrimPrefix(user, "User:") }
