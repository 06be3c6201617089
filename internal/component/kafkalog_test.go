package component_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/component"
)

func TestKafkaLoggerKeepsWarningsAndErrors(t *testing.T) {
	var buf bytes.Buffer
	l := component.KafkaLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	if l.Level() != kgo.LogLevelWarn {
		t.Fatalf("level %v, want warn", l.Level())
	}
	l.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:9092")
	l.Log(kgo.LogLevelError, "fatal", "err", "boom")
	l.Log(kgo.LogLevelInfo, "metadata update triggered", "why", "a test")
	out := buf.String()
	for _, want := range []string{`level=WARN msg="kafka: unable to open connection to broker" addr=127.0.0.1:9092`,
		`level=ERROR msg="kafka: fatal" err=boom`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "metadata update") {
		t.Errorf("an info message of franz-go logged at level info: %q", out)
	}
}

// At HOOKSTREAM_LOG_LEVEL=debug franz-go's info messages (transactions, metadata refreshes,
// produce errors and retries) come as debug records; its debug messages never do.
func TestKafkaLoggerAtDebugAddsTheClientsInfo(t *testing.T) {
	var buf bytes.Buffer
	l := component.KafkaLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if l.Level() != kgo.LogLevelInfo {
		t.Fatalf("level %v, want info", l.Level())
	}
	l.Log(kgo.LogLevelInfo, "produce request failed, triggering metadata update", "err", "NOT_LEADER_OR_FOLLOWER")
	l.Log(kgo.LogLevelDebug, "wrote Produce v13", "broker", "1")
	out := buf.String()
	if want := `level=DEBUG msg="kafka: produce request failed, triggering metadata update" err=NOT_LEADER_OR_FOLLOWER`; !strings.Contains(out, want) {
		t.Errorf("log %q lacks %q", out, want)
	}
	if strings.Contains(out, "wrote Produce") {
		t.Errorf("franz-go's debug message logged: %q", out)
	}
}

func TestClientOptionsPutTheCallersLast(t *testing.T) {
	b := component.Base{Brokers: []string{"127.0.0.1:1"}, KafkaOptions: []kgo.Opt{kgo.ClientID("mine")}}
	opts := b.ClientOptions(slog.Default(), kgo.ClientID("component"))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.OptValue(kgo.ClientID); got != "mine" {
		t.Errorf("client id %v, want the caller's", got)
	}
	if got := cl.OptValues(kgo.SeedBrokers); len(got) != 1 {
		t.Errorf("seed brokers %v", got)
	}
	if _, ok := cl.OptValue(kgo.WithLogger).(kgo.Logger); !ok {
		t.Error("no logger")
	}
}

// A retriable produce error and a newly assigned partition wait for a metadata refresh;
// franz-go's default spaces refreshes 5 s apart, which held cdc's events and fanout's deliveries
// that long in `make bench`.
func TestClientOptionsRefreshMetadataQuickly(t *testing.T) {
	b := component.Base{Brokers: []string{"127.0.0.1:1"}}
	cl, err := kgo.NewClient(b.ClientOptions(slog.Default())...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got, _ := cl.OptValue(kgo.MetadataMinAge).(time.Duration); got <= 0 || got > 100*time.Millisecond {
		t.Errorf("metadata min age %v, want at most 100ms", got)
	}
}
