package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kafkaPassword = "kafka-Pa55-never-shown"

// Kafka security settings that cannot work stop every command that connects to Kafka at
// start, with the reason and never the password; -h shows no secret given in the environment.
func TestKafkaSecurityRefusedAtStart(t *testing.T) {
	t.Setenv("HOOKSTREAM_KAFKA_SASL_PASSWORD", kafkaPassword)
	t.Setenv("HOOKSTREAM_KAFKA_BROKERS", "127.0.0.1:1")
	missing := filepath.Join(t.TempDir(), "ca.pem")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"topics", "create", "--kafka-sasl-mechanism=SCRAM-SHA-1", "--kafka-sasl-username=u"}, `unknown mechanism "SCRAM-SHA-1"`},
		{[]string{"cdc", "--kafka-sasl-mechanism=scram-sha-512"}, "no username (HOOKSTREAM_KAFKA_SASL_USERNAME)"},
		{[]string{"sender", "--kafka-tls-cert-file=/x.pem"}, "a client certificate needs its key"},
		{[]string{"admin", "--kafka-tls-ca-file=" + missing, "--kafka-sasl-mechanism=PLAIN", "--kafka-sasl-username=u"}, "CA file: open " + missing},
		{[]string{"fanout", "--kafka-sasl-mechanism=AWS_MSK_IAM"}, "AWS_ACCESS_KEY_ID"},
	} {
		status, out, errOut := cli(t, c.args...)
		if status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("hookstream %s: status %d, stderr %q, want 2 and %q", strings.Join(c.args, " "), status, errOut, c.want)
		}
		if strings.Contains(out+errOut, kafkaPassword) {
			t.Errorf("hookstream %s shows the password: %q %q", strings.Join(c.args, " "), out, errOut)
		}
	}
	for _, cmd := range []string{"cdc", "admin", "topics"} {
		_, out, _ := cli(t, cmd, "-h")
		if !strings.Contains(out, "-kafka-sasl-password") || strings.Contains(out, kafkaPassword) {
			t.Errorf("hookstream %s -h: lacks the flag or shows the password:\n%s", cmd, out)
		}
	}
	if _, out, _ := cli(t, "dev", "-h"); strings.Contains(out, "-kafka-tls") {
		t.Error("dev's embedded Kafka is plain, yet dev -h lists Kafka TLS settings")
	}
}

// The settings become the options of every client: component.Base carries them, and the
// password file is read at start.
func TestKafkaSecurityReachesTheBase(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte(kafkaPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := parseSettings("recorder", []string{"--kafka-tls", "--kafka-sasl-mechanism=SCRAM-SHA-512",
		"--kafka-sasl-username=hookstream-recorder", "--kafka-sasl-password-file=" + pw}, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.base(nil, nil).Security); got != 2 {
		t.Errorf("%d security options in the base, want TLS and SASL", got)
	}
	if got, want := s.kafka.String(), "TLS (system roots), SASL SCRAM-SHA-512 as hookstream-recorder"; got != want {
		t.Errorf("security %q, want %q", got, want)
	}
	if err := os.Remove(pw); err != nil {
		t.Fatal(err)
	}
	if _, err := parseSettings("recorder", []string{"--kafka-sasl-mechanism=SCRAM-SHA-512",
		"--kafka-sasl-username=hookstream-recorder", "--kafka-sasl-password-file=" + pw}, os.Stdout); err == nil || !strings.Contains(err.Error(), pw) {
		t.Errorf("a missing password file: %v, want an error naming it", err)
	}
}
