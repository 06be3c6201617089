package retrytopics

import (
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestScheduleDefaultDelays(t *testing.T) {
	s := DefaultSchedule()
	tests := []struct {
		attemptNo int
		want      time.Duration
		ok        bool
	}{
		{0, 5 * time.Second, true}, // no attempt number: treated as the first
		{1, 5 * time.Second, true},
		{2, time.Minute, true},
		{3, 10 * time.Minute, true},
		{4, time.Hour, true},
		{5, 3 * time.Hour, true},
		{6, 6 * time.Hour, true},
		{7, 12 * time.Hour, true},
		{8, 24 * time.Hour, true},
		{9, 24 * time.Hour, true},
		{10, 0, false}, // the tenth attempt was the last
		{11, 0, false},
	}
	for _, tt := range tests {
		got, ok := s.next(tt.attemptNo, 0, 0.5) // u = 0.5: no jitter
		if got != tt.want || ok != tt.ok {
			t.Errorf("after attempt %d: got %s, %v; want %s, %v", tt.attemptNo, got, ok, tt.want, tt.ok)
		}
	}
	if n := s.Attempts(); n != 10 {
		t.Errorf("default schedule allows %d attempts, want 10", n)
	}
}

func TestScheduleJitterBounds(t *testing.T) {
	s := DefaultSchedule()
	for attempt := 1; attempt <= len(s.Delays); attempt++ {
		base := s.Delays[attempt-1]
		lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2)
		seenLo, seenHi := hi, lo
		for i := 0; i < 2000; i++ {
			d, ok := s.Next(attempt, 0)
			if !ok {
				t.Fatalf("attempt %d: exhausted", attempt)
			}
			if d < lo || d > hi {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, lo, hi)
			}
			seenLo, seenHi = min(seenLo, d), max(seenHi, d)
		}
		// 2000 uniform draws cover most of the ±20 % band; a jitter that does nothing fails.
		if spread := float64(seenHi-seenLo) / float64(base); spread < 0.3 {
			t.Errorf("attempt %d: delays spread over only %.0f%% of the base delay", attempt, spread*100)
		}
	}
	// The extreme draws land on the band's edges.
	if d, _ := s.next(1, 0, 0); d != 4*time.Second {
		t.Errorf("lowest draw gives %s, want 4s", d)
	}
	if d, _ := s.next(1, 0, 0.999999999); d < 5999*time.Millisecond || d > 6*time.Second {
		t.Errorf("highest draw gives %s, want just under 6s", d)
	}
}

func TestScheduleExhaustsAfterConfiguredAttempts(t *testing.T) {
	tests := []struct {
		name     string
		delays   []time.Duration
		attempts int
	}{
		{"one retry", []time.Duration{time.Second}, 2},
		{"three retries", []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, 4},
		{"default", DefaultSchedule().Delays, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Schedule{Delays: tt.delays, Jitter: 0.2, MaxRetryAfter: time.Hour}
			if s.Attempts() != tt.attempts {
				t.Fatalf("Attempts() = %d, want %d", s.Attempts(), tt.attempts)
			}
			for a := 1; a < tt.attempts; a++ {
				if _, ok := s.Next(a, 0); !ok {
					t.Errorf("exhausted after attempt %d of %d", a, tt.attempts)
				}
			}
			if d, ok := s.Next(tt.attempts, 0); ok {
				t.Errorf("attempt %d of %d still scheduled a retry in %s", tt.attempts, tt.attempts, d)
			}
			if _, ok := s.Next(tt.attempts, time.Minute); ok {
				t.Errorf("a Retry-After revived an exhausted delivery")
			}
		})
	}
}

func TestScheduleRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		delay      time.Duration
		jitter     float64
		retryAfter time.Duration
		min, max   time.Duration
	}{
		{"429 with 2s raises a 1s delay", time.Second, 0, 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{"2s raises a jittered 1s delay", time.Second, 0.2, 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{"30 days is capped at 24h", 5 * time.Second, 0.2, 30 * 24 * time.Hour, 24 * time.Hour, 24 * time.Hour},
		{"shorter than the delay changes nothing", 5 * time.Second, 0, time.Second, 5 * time.Second, 5 * time.Second},
		{"zero is no Retry-After", 5 * time.Second, 0, 0, 5 * time.Second, 5 * time.Second},
		{"negative is ignored", 5 * time.Second, 0, -10 * time.Second, 5 * time.Second, 5 * time.Second},
		{"negative is ignored, jitter kept", 5 * time.Second, 0.2, -10 * time.Second, 4 * time.Second, 6 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Schedule{Delays: []time.Duration{tt.delay}, Jitter: tt.jitter, MaxRetryAfter: 24 * time.Hour}
			for i := 0; i < 200; i++ {
				d, ok := s.Next(1, tt.retryAfter)
				if !ok {
					t.Fatal("exhausted")
				}
				if d < tt.min || d > tt.max {
					t.Fatalf("delay %s outside [%s, %s]", d, tt.min, tt.max)
				}
			}
		})
	}
}

func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		name string
		s    Schedule
		want string // "" = valid
	}{
		{"default", DefaultSchedule(), ""},
		{"no delays", Schedule{Jitter: 0.2, MaxRetryAfter: time.Hour}, "no delays"},
		{"zero delay", Schedule{Delays: []time.Duration{time.Second, 0}, MaxRetryAfter: time.Hour}, "delay 2"},
		{"negative jitter", Schedule{Delays: []time.Duration{time.Second}, Jitter: -0.1, MaxRetryAfter: time.Hour}, "jitter"},
		{"jitter of 100%", Schedule{Delays: []time.Duration{time.Second}, Jitter: 1, MaxRetryAfter: time.Hour}, "jitter"},
		{"no retry-after cap", Schedule{Delays: []time.Duration{time.Second}}, "retry-after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestRouteFor(t *testing.T) {
	routes := DefaultConfig().routes()
	tests := []struct {
		wait time.Duration
		want string
	}{
		{0, "5s"},
		{4 * time.Second, "5s"}, // shorter than every tier: the shortest
		{5 * time.Second, "5s"},
		{59 * time.Second, "5s"},
		{time.Minute, "1m"},
		{72 * time.Second, "1m"},
		{10 * time.Minute, "10m"},
		{59 * time.Minute, "10m"},
		{time.Hour, "1h"},
		{3 * time.Hour, "3h"},
		{7 * time.Hour, "6h"},
		{12 * time.Hour, "12h"},
		{23 * time.Hour, "12h"},
		{24 * time.Hour, "24h"},
		{29 * time.Hour, "24h"},
		{30 * 24 * time.Hour, "24h"},
	}
	for _, tt := range tests {
		if got := routeFor(routes, tt.wait).name; got != tt.want {
			t.Errorf("wait %s goes to tier %s, want %s", tt.wait, got, tt.want)
		}
	}

	compressed := DefaultConfig()
	compressed.TierDelays = map[string]time.Duration{"5s": 100 * time.Millisecond, "1m": 200 * time.Millisecond, "10m": 500 * time.Millisecond}
	cr := compressed.routes()
	for _, tt := range []struct {
		wait time.Duration
		want string
	}{{50 * time.Millisecond, "5s"}, {199 * time.Millisecond, "5s"}, {200 * time.Millisecond, "1m"}, {time.Hour, "10m"}} {
		if got := routeFor(cr, tt.wait).name; got != tt.want {
			t.Errorf("compressed: wait %s goes to tier %s, want %s", tt.wait, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		c := DefaultConfig()
		c.Brokers = []string{"127.0.0.1:9092"}
		return c
	}
	testenv.CheckValidate(t, valid, Config.Validate, []testenv.ConfigCase[Config]{
		{"default", func(*Config) {}, ""},
		{"no brokers", func(c *Config) { c.Brokers = nil }, "brokers"},
		{"bad prefix", func(c *Config) { c.Prefix = "a b" }, "prefix"},
		{"unknown tier", func(c *Config) { c.TierDelays = map[string]time.Duration{"2d": time.Hour} }, `tier "2d"`},
		{"no tiers", func(c *Config) { c.TierDelays = nil }, "no retry tiers"},
		{"same delay twice", func(c *Config) {
			c.TierDelays = map[string]time.Duration{"5s": time.Second, "1m": time.Second}
		}, "same delay"},
		{"schedule longer than the max hold", func(c *Config) { c.MaxHold = 12 * time.Hour }, "max hold"},
		{"empty look-ahead", func(c *Config) { c.LookAheadRecords = 0 }, "look-ahead records"},
		{"zero poll wait", func(c *Config) { c.MaxPollWait = 0 }, "positive"},
		{"no logger", func(c *Config) { c.Logger = nil }, "logger"},
	})
}
