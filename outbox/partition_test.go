package outbox_test

import (
	"testing"

	"github.com/hookstream/hookstream/outbox"
)

// The partition function is a contract with readers of the event log (R32): these values are
// what docs/consuming-the-log.md's Python computes, and must never change.
func TestPartitionForIsStable(t *testing.T) {
	for _, tc := range []struct {
		partner    string
		partitions int32
		want       int32
	}{
		{"acme", 12, 7},
		{"partner_a", 12, 1},
		{"partner_b", 3, 1},
		{"ünïcode", 12, 7},
		{"", 12, 1},
		{"acme", 1, 0},
	} {
		got, err := outbox.PartitionFor(tc.partner, tc.partitions)
		if err != nil || got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, %v; want %d", tc.partner, tc.partitions, got, err, tc.want)
		}
	}
	for _, n := range []int32{0, -1} {
		if _, err := outbox.PartitionFor("acme", n); err == nil {
			t.Errorf("%d partitions accepted", n)
		}
	}
}
