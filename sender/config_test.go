package sender_test

import (
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/sender"
)

func TestConfigValidate(t *testing.T) {
	key, err := secretbox.ParseKey("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err != nil {
		t.Fatal(err)
	}
	valid := func() sender.Config {
		c := sender.DefaultConfig()
		c.Brokers = []string{"127.0.0.1:9092"}
		c.SecretKeys = secretbox.KeyringOf(key)
		return c
	}
	testenv.CheckValidate(t, valid, sender.Config.Validate, []testenv.ConfigCase[sender.Config]{
		{"defaults with brokers and key", func(*sender.Config) {}, ""},
		{"no brokers", func(c *sender.Config) { c.Brokers = nil }, "no Kafka brokers"},
		{"no key", func(c *sender.Config) { c.SecretKeys = secretbox.Keyring{} }, "HOOKSTREAM_SECRET_KEY"},
		{"no prefix", func(c *sender.Config) { c.Prefix = "" }, "prefix"},
		{"bad egress", func(c *sender.Config) { c.Egress.RequestTimeout = 0 }, "request timeout"},
		{"queue size", func(c *sender.Config) { c.QueueSize = 0 }, "queue size"},
		{"breaker failures", func(c *sender.Config) { c.BreakerFailures = 0 }, "breaker failures"},
		{"breaker failures over the memory", func(c *sender.Config) { c.BreakerFailures = 65 }, "at most 64"},
		{"cooldown", func(c *sender.Config) { c.BreakerCooldown = -time.Second }, "breaker cooldown"},
		{"defer delays", func(c *sender.Config) { c.MaxDeferDelay = time.Second }, "max defer delay"},
		{"ordered backoff", func(c *sender.Config) { c.OrderedMaxBackoff = time.Millisecond }, "ordered max backoff"},
		{"no user agent", func(c *sender.Config) { c.UserAgent = "" }, "user agent"},
		{"no logger", func(c *sender.Config) { c.Logger = nil }, "logger"},
	})
	// Every problem is reported at once.
	testenv.ErrorMentions(t, sender.Config{}.Validate(), "brokers", "prefix", "secret key", "queue size", "logger")
	if _, err := sender.New(valid(), nil, nil); err == nil {
		t.Fatal("New accepted a nil view")
	}
}
