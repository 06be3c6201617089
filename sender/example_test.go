package sender_test

import (
	"context"
	"log"
	"os"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/sender"
)

// How a command wires a sender: the endpoint view it reads endpoints from (run by the caller),
// the retry tiers it hands retries to, and the processes' keyring (here HOOKSTREAM_SECRET_KEY alone).
func ExampleNew() {
	ctx := context.Background()
	brokers := []string{"127.0.0.1:19092"}

	key, err := secretbox.ParseKey(os.Getenv("HOOKSTREAM_SECRET_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: brokers, Topic: "hookstream.endpoints"})
	if err != nil {
		log.Fatal(err)
	}
	go view.Run(ctx) //nolint:errcheck // ends with ctx

	cfg := sender.DefaultConfig()
	cfg.Brokers = brokers
	cfg.SecretKeys = secretbox.KeyringOf(key)
	cfg.UserAgent = "hookstream/1.0.0"
	var tiers sender.Retrier // retrytopics provides it
	s, err := sender.New(cfg, view, tiers)
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Run(ctx); err != nil { // returns after an ordered shutdown when ctx ends
		log.Fatal(err)
	}
}
