package cdc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// captured reads testdata/pgoutput-capture.txt: real pgoutput messages of outbox and endpoint
// changes, in the order PostgreSQL sent them.
func captured(t testing.TB) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/pgoutput-capture.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var msgs [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		_, hexData, ok := strings.Cut(line, "|")
		b, err := hex.DecodeString(hexData)
		if !ok || err != nil {
			t.Fatalf("capture line %q: %v", line, err)
		}
		msgs = append(msgs, b)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// relationAndChange pairs each captured row change (insert, update, delete) with the Relation
// message before it that describes its table: the smallest stream cdc can decode a row from.
func relationAndChange(t testing.TB) [][2][]byte {
	var (
		pairs     [][2][]byte
		relations = map[string][]byte{} // by relation id (bytes 1 to 5 of either message)
	)
	for _, m := range captured(t) {
		switch m[0] {
		case 'R':
			relations[string(m[1:5])] = m
		case 'I', 'U', 'D':
			if r, ok := relations[string(m[1:5])]; ok {
				pairs = append(pairs, [2][]byte{r, m})
			}
		}
	}
	if len(pairs) < 7 {
		t.Fatalf("the capture gives %d row changes with their relation, want 7", len(pairs))
	}
	return pairs
}

// decoded is what cdc made of one row change.
type decoded struct {
	relation string
	env      outbox.Envelope
	body     []byte
	endpoint records.Endpoint
	secret   records.Secret
	err      error
}

// decodeStream decodes messages as a session does (handleWAL, change) up to the envelope, the
// endpoint record or the secret, and returns one result for each tuple of a row change.
func decodeStream(msgs [][]byte) (out []decoded, parseErrs []error) {
	rels := newRelations()
	for _, wal := range msgs {
		msg, err := parseMessage(wal)
		if err != nil {
			parseErrs = append(parseErrs, err)
			continue
		}
		var tuples []*pglogrepl.TupleData
		var relID uint32
		switch m := msg.(type) {
		case *pglogrepl.RelationMessage:
			rels.add(m)
		case *pglogrepl.InsertMessage:
			relID, tuples = m.RelationID, []*pglogrepl.TupleData{m.Tuple}
		case *pglogrepl.UpdateMessage:
			relID, tuples = m.RelationID, []*pglogrepl.TupleData{m.OldTuple, m.NewTuple}
		case *pglogrepl.DeleteMessage:
			relID, tuples = m.RelationID, []*pglogrepl.TupleData{m.OldTuple}
		}
		for _, tuple := range tuples {
			if tuple != nil {
				out = append(out, decodeRow(rels, relID, tuple))
			}
		}
	}
	return out, parseErrs
}

func decodeRow(rels *relations, relID uint32, tuple *pglogrepl.TupleData) decoded {
	rel, rw, err := rels.decode(relID, tuple)
	if err != nil {
		return decoded{err: err}
	}
	d := decoded{relation: rel.RelationName}
	switch rel.RelationName {
	case "outbox_event":
		d.env, d.body, d.err = envelopeFromRow(rels, rw)
	case "endpoint":
		d.err = endpointFromRow(rels, rw, &d.endpoint)
	case "endpoint_secret":
		_, d.secret, d.err = secretFromRow(rels, rw)
	}
	return d
}

// TestDecodeCapturedPgoutput decodes the real messages of the capture into the envelopes and
// endpoint records cdc publishes, so the fuzz seeds are messages cdc understands.
func TestDecodeCapturedPgoutput(t *testing.T) {
	t.Parallel()
	out, parseErrs := decodeStream(captured(t))
	if len(parseErrs) > 0 {
		t.Fatalf("captured messages did not parse: %v", parseErrs)
	}
	var envs []outbox.Envelope
	var eps []records.Endpoint
	secrets := 0
	for _, d := range out {
		if d.err != nil {
			t.Fatalf("%s row: %v", d.relation, d.err)
		}
		switch d.relation {
		case "outbox_event":
			envs = append(envs, d.env)
			var back outbox.Envelope
			if err := json.Unmarshal(d.body, &back); err != nil || back.EventID != d.env.EventID {
				t.Errorf("envelope bytes %s do not read back: %v", d.body, err)
			}
		case "endpoint":
			eps = append(eps, d.endpoint)
		case "endpoint_secret":
			secrets++
			if !bytes.Equal(d.secret.Ciphertext, []byte{0, 1, 2, 3}) {
				t.Errorf("secret ciphertext %x, want 00010203", d.secret.Ciphertext)
			}
		}
	}
	if len(envs) != 2 || len(eps) != 4 || secrets != 2 {
		t.Fatalf("decoded %d envelopes, %d endpoint rows, %d secret rows; want 2, 4 (insert, update's old and new, delete), 2", len(envs), len(eps), secrets)
	}
	e := envs[0]
	wantAt := time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)
	if e.EventID != "evt_01JABCDEFGHJKMNPQRSTVWXYZ0" || e.PartnerID != "pa" || e.Type != "customer.created" ||
		e.Subject.Type != "customer" || e.Subject.ID != "cus_1" || !e.OccurredAt.Equal(wantAt) ||
		e.SchemaVersion != 1 || e.CorrelationID != "req-7" {
		t.Errorf("first envelope %+v", e)
	}
	if want := `{"name": "Ada <Lovelace>", "balance": "12.50", "customer_id": "cus_1"}`; string(e.Data) != want {
		t.Errorf("data %s, want jsonb's text %s", e.Data, want)
	}
	if envs[1].CorrelationID != "" || envs[1].SchemaVersion != 1 {
		t.Errorf("second envelope %+v: want the column defaults", envs[1])
	}
	ep := eps[0]
	if ep.ID != "ep_01" || ep.URL != "https://example.com/hook" || len(ep.EventTypes) != 2 || ep.EventTypes[0] != "customer.*" ||
		ep.RateLimitPerSec == nil || *ep.RateLimitPerSec != 5.5 || ep.Status != "active" {
		t.Errorf("inserted endpoint %+v", ep)
	}
	if eps[2].Status != "disabled" || eps[2].DisabledReason != "gone" || eps[2].FailingSince == nil {
		t.Errorf("updated endpoint %+v", eps[2])
	}
}

// FuzzDecodePgoutput feeds cdc's decoding (parseMessage, relations.decode and the row decoders
// behind envelopeFromRow, endpointFromRow and secretFromRow) a Relation message and a row change,
// seeded with real ones. Whatever the bytes, it must not panic; a refusal is an error with a
// message, and what it accepts is a valid envelope whose bytes read back, or an endpoint record
// that can be written to Kafka.
func FuzzDecodePgoutput(f *testing.F) {
	for _, p := range relationAndChange(f) {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, relation, change []byte) {
		out, parseErrs := decodeStream([][]byte{relation, change})
		for _, err := range parseErrs {
			if err.Error() == "" {
				t.Fatal("a message refused with an empty error")
			}
		}
		for _, d := range out {
			switch {
			case d.err != nil:
				if d.err.Error() == "" {
					t.Fatalf("a %s row refused with an empty error", d.relation)
				}
			case d.relation == "outbox_event":
				if err := d.env.Validate(); err != nil {
					t.Fatalf("accepted an invalid envelope: %v", err)
				}
				var back outbox.Envelope
				if err := json.Unmarshal(d.body, &back); err != nil || back.EventID != d.env.EventID {
					t.Fatalf("envelope bytes %q do not read back: %v", d.body, err)
				}
				var data bytes.Buffer // the envelope holds the data compacted
				if err := json.Compact(&data, d.env.Data); err != nil || !bytes.Equal(back.Data, data.Bytes()) {
					t.Fatalf("envelope data %q reads back as %q: %v", d.env.Data, back.Data, err)
				}
			case d.relation == "endpoint":
				if _, err := json.Marshal(d.endpoint); err != nil {
					t.Fatalf("accepted an endpoint that cannot be written: %v", err)
				}
			}
		}
	})
}

// TestParseMessageRefusesCorruptMessages holds what FuzzDecodePgoutput found: pglogrepl
// allocates what a column's length or a truncation's count says before reading, and panics on a
// message cut short. Both must be plain errors, with no large allocation.
func TestParseMessageRefusesCorruptMessages(t *testing.T) {
	var insert []byte
	for _, m := range captured(t) {
		if m[0] == 'I' {
			insert = m
			break
		}
	}
	// 'I', relation id, 'N', Int16 columns, then the first column: 't' and its Int32 length.
	hugeColumn := bytes.Clone(insert)
	binary.BigEndian.PutUint32(hugeColumn[9:], 0xFFFFFFF0)
	hugeUpdate := append([]byte{'U'}, hugeColumn[1:]...)
	hugeUpdate[5] = 'O'
	truncate := []byte{'T', 0xFF, 0xFF, 0xFF, 0xF0, 0, 0, 0, 0, 1}
	for name, wal := range map[string][]byte{
		"column length past the message": hugeColumn,
		"old tuple length past the end":  hugeUpdate,
		"truncation count past the end":  truncate,
		"insert cut short":               insert[:len(insert)/2],
		"relation cut short":             []byte{'R', 0, 0, 1, 0, 'p', 0, 'x', 0, 'd', 0, 5},
		"empty":                          {},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		msg, err := parseMessage(wal)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: parsed as %T, want an error", name, msg)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s: %d bytes allocated", name, grew)
		}
	}
}
