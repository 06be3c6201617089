package inbox

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestConfigValidate(t *testing.T) {
	testenv.CheckValidate(t, DefaultConfig, Config.Validate, []testenv.ConfigCase[Config]{
		{"defaults", func(c *Config) {}, ""},
		{"custom table", func(c *Config) { c.Table = "partner_inbox_2" }, ""},
		{"table with a quote", func(c *Config) { c.Table = `inbox"; DROP TABLE x; --` }, "table"},
		{"table with capitals", func(c *Config) { c.Table = "Inbox" }, "table"},
		{"table with a schema", func(c *Config) { c.Table = "public.inbox" }, "table"},
		{"table too long", func(c *Config) { c.Table = strings.Repeat("a", 49) }, "table"},
		{"table at the limit", func(c *Config) { c.Table = strings.Repeat("a", 48) }, ""},
		{"empty table", func(c *Config) { c.Table = "" }, "table"},
		{"no body", func(c *Config) { c.MaxBodyBytes = 0 }, "max body bytes"},
		{"no store timeout", func(c *Config) { c.StoreTimeout = 0 }, "store timeout"},
		{"no poll interval", func(c *Config) { c.PollInterval = -time.Second }, "poll interval"},
		{"no process timeout", func(c *Config) { c.ProcessTimeout = 0 }, "process timeout"},
		{"no first retry delay", func(c *Config) { c.FirstRetryDelay = 0 }, "first retry delay"},
		{"max below first delay", func(c *Config) { c.MaxRetryDelay = c.FirstRetryDelay - 1 }, "max retry delay"},
		{"batch of zero", func(c *Config) { c.BatchSize = 0 }, "batch size"},
		{"huge batch", func(c *Config) { c.BatchSize = maxBatchSize + 1 }, "batch size"},
		{"no attempts", func(c *Config) { c.MaxAttempts = 0 }, "max attempts"},
		{"no logger", func(c *Config) { c.Logger = nil }, "logger"},
	})
}

func TestConfigValidateReportsEveryField(t *testing.T) {
	testenv.ErrorMentions(t, Config{}.Validate(), "table", "max body bytes", "store timeout", "poll interval",
		"process timeout", "first retry delay", "batch size", "max attempts", "logger")
}

func TestRetryDelay(t *testing.T) {
	c := DefaultConfig()
	c.FirstRetryDelay = 5 * time.Second
	c.MaxRetryDelay = time.Minute
	huge := DefaultConfig()
	huge.FirstRetryDelay = time.Second
	huge.MaxRetryDelay = time.Duration(1<<63 - 1)
	tests := []struct {
		cfg      Config
		failures int
		want     time.Duration
	}{
		{c, 1, 5 * time.Second},
		{c, 2, 10 * time.Second},
		{c, 3, 20 * time.Second},
		{c, 4, 40 * time.Second},
		{c, 5, time.Minute}, // 80 s capped
		{c, 50, time.Minute},
		{c, 0, 5 * time.Second}, // never called with 0; still the first delay
		{huge, 63, time.Duration(1<<63 - 1)},
		{huge, 1000, time.Duration(1<<63 - 1)}, // no overflow into a negative delay
	}
	for _, tt := range tests {
		if got := tt.cfg.retryDelay(tt.failures); got != tt.want {
			t.Errorf("retryDelay(%d) with first %s, max %s = %s, want %s",
				tt.failures, tt.cfg.FirstRetryDelay, tt.cfg.MaxRetryDelay, got, tt.want)
		}
	}
}

// The defaults promise about ten hours of retries (Config doc); keep that true.
func TestDefaultRetryHorizon(t *testing.T) {
	c := DefaultConfig()
	var total time.Duration
	for failures := 1; failures < c.MaxAttempts; failures++ {
		total += c.retryDelay(failures)
	}
	if total < 9*time.Hour || total > 11*time.Hour {
		t.Fatalf("default retries span %s, documented as about 10 hours", total)
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"short", "boom", 10, "boom"},
		{"exact", "0123456789", 10, "0123456789"},
		{"long", "0123456789abc", 10, "0123456…"},
		{"NUL removed", "a\x00b", 10, "ab"},
		{"invalid UTF-8 replaced", "a\xffb", 10, "a\uFFFDb"},
		{"no split rune", "ééééé", 7, "éé…"},
		{"tiny limit", "abcdef", 1, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clip(tt.in, tt.limit)
			if got != tt.want {
				t.Fatalf("clip(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("clip returned invalid UTF-8 %q", got)
			}
		})
	}
}

func TestSchemaFor(t *testing.T) {
	sql, err := SchemaFor("partner_inbox")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sql, "webhook_inbox") {
		t.Fatalf("SchemaFor left the default name in:\n%s", sql)
	}
	for _, want := range []string{`CREATE TABLE IF NOT EXISTS "partner_inbox" (`, `CREATE INDEX IF NOT EXISTS "partner_inbox_due" ON "partner_inbox"`} {
		if !strings.Contains(sql, want) {
			t.Fatalf("SchemaFor lacks %q:\n%s", want, sql)
		}
	}
	if _, err := SchemaFor(`x"y`); err == nil {
		t.Fatal(`SchemaFor accepted the table name x"y`)
	}
}
