package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// loadTypes are the business types the load commits, one in five each; their data is the
// catalog's example of the type (valid by definition), their subject numbered.
var loadTypes = []string{"customer.created", "api_key.status_changed", "balance.credited", "usage.finalized", "budget.threshold_crossed"}

// subjectTypes are the subjects of loadTypes, by type.
var subjectTypes = map[string]string{"customer.created": "customer", "api_key.status_changed": "api_key",
	"balance.credited": "customer", "usage.finalized": "usage", "budget.threshold_crossed": "budget"}

// eventSource draws each event's partner by weight and its type uniformly.
type eventSource struct {
	mu       sync.Mutex
	rng      *rand.Rand
	examples map[string]json.RawMessage
	versions map[string]int // the schema version of each example: the type's newest
}

func newEventSource(seed uint64) (*eventSource, error) {
	s := &eventSource{rng: rand.New(rand.NewPCG(seed, 1)), examples: map[string]json.RawMessage{}, versions: map[string]int{}}
	for _, typ := range loadTypes {
		et, ok := eventcatalog.Lookup(typ)
		if !ok {
			return nil, fmt.Errorf("load: the catalog has no %s", typ)
		}
		s.examples[typ], s.versions[typ] = et.Example, et.SchemaVersion
	}
	return s, nil
}

// event is the n-th event of the load.
func (s *eventSource) event(n int64) outbox.Event {
	s.mu.Lock()
	r, t := s.rng.Float64(), s.rng.IntN(len(loadTypes))
	s.mu.Unlock()
	partner := partners[len(partners)-1].id
	for _, p := range partners {
		if r < p.weight {
			partner = p.id
			break
		}
		r -= p.weight
	}
	typ := loadTypes[t]
	return outbox.Event{PartnerID: partner, Type: typ,
		Subject:       outbox.Subject{Type: subjectTypes[typ], ID: fmt.Sprintf("%s_%d", subjectTypes[typ], n)},
		SchemaVersion: s.versions[typ], Data: s.examples[typ]}
}
