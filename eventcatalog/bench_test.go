package eventcatalog_test

import (
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
)

// The cost CheckEvent adds to every Append: decoding the data and walking its schema.
func BenchmarkCheckEvent(b *testing.B) {
	c := newCatalog(b)
	for _, typ := range []string{"customer.deleted", "balance.credited", "usage.finalized"} {
		et, _ := eventcatalog.Lookup(typ)
		ev := eventOf(et, et.Example)
		b.Run(typ, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(et.Example)))
			for b.Loop() {
				if err := c.CheckEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("New", func(b *testing.B) {
		for b.Loop() {
			if _, err := eventcatalog.New(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
