package component_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/component"
)

func TestDefaultBaseNeedsOnlyBrokers(t *testing.T) {
	b := component.DefaultBase()
	if err := b.Validate(); err == nil || err.Error() != "no Kafka brokers" {
		t.Fatalf("defaults without brokers: %v, want only \"no Kafka brokers\"", err)
	}
	b.Brokers = []string{"127.0.0.1:9092"}
	if err := b.Validate(); err != nil {
		t.Fatalf("defaults with brokers: %v", err)
	}
}

func TestValidateSaysEveryProblem(t *testing.T) {
	for _, c := range []struct {
		name string
		base component.Base
		want []string
	}{
		{"zero", component.Base{}, []string{"no Kafka brokers", "topic prefix is empty", "logger is nil"}},
		{"bad prefix", component.Base{Brokers: []string{"b:9092"}, Prefix: "a/b", Logger: slog.Default()},
			[]string{`prefix "a/b" may hold only letters, digits, '.', '_' and '-'`}},
		{"long prefix", component.Base{Brokers: []string{"b:9092"}, Prefix: strings.Repeat("p", 201), Logger: slog.Default()},
			[]string{"prefix is longer than 200 characters"}},
	} {
		err := c.base.Validate()
		if err == nil {
			t.Errorf("%s: valid", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}
