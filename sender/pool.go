package sender

import (
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchPool lets the consumer reuse the memory of fetched batches: the buffers batches are
// decompressed into and the slices their records are decoded into (kgo.WithPools). intake
// copies what it keeps out of a record and recycles it at once, so the sender's garbage comes
// from its own work rather than from every fetched byte; at full speed those buffers were the
// largest allocation of the process.
type fetchPool struct {
	bytes   sync.Pool // *[]byte
	records sync.Pool // *[]kgo.Record
}

var (
	_ kgo.PoolDecompressBytes = (*fetchPool)(nil)
	_ kgo.PoolRecords         = (*fetchPool)(nil)
)

// GetDecompressBytes returns a buffer with room for the decompressed batch: a pooled one if
// it is large enough, else a new one. A snappy block states its decoded length; for the other
// codecs the size is a guess and the client grows the buffer when it is too small.
func (p *fetchPool) GetDecompressBytes(compressed []byte, codec kgo.CompressionCodecType) []byte {
	want := 8 * len(compressed)
	if codec == kgo.CodecSnappy {
		if n, err := s2.DecodedLen(compressed); err == nil {
			want = n
		}
	}
	if b, ok := p.bytes.Get().(*[]byte); ok && cap(*b) >= want {
		return *b
	}
	return make([]byte, 0, want)
}

// PutDecompressBytes takes back a buffer once every record decoded from it is recycled.
func (p *fetchPool) PutDecompressBytes(b []byte) { p.bytes.Put(&b) }

// GetRecords returns a slice of capacity n at least.
func (p *fetchPool) GetRecords(n int) []kgo.Record {
	if rs, ok := p.records.Get().(*[]kgo.Record); ok && cap(*rs) >= n {
		return (*rs)[:0]
	}
	return make([]kgo.Record, 0, n)
}

// PutRecords takes back a slice of records once each of them is recycled.
func (p *fetchPool) PutRecords(rs []kgo.Record) { p.records.Put(&rs) }
