package records

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The original is carried once: JSON as it is, anything else as one JSON string holding its
// text, never a string of a quoted string.
func TestNewDeadLetterCarriesTheOriginalOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, original, want string
	}{
		{"object", `{"a": 1}`, `{"a": 1}`},
		{"text", `not json`, `"not json"`},
		{"quotes", `say "hi"`, `"say \"hi\""`},
		{"invalid utf-8", "bad \xff byte", "\"bad \uFFFD byte\""},
		{"json in invalid utf-8", "\"\xff\"", "\"\\\"\uFFFD\\\"\""},
		{"empty", ``, ``},
	} {
		dl := NewDeadLetter("fanout", "why", []byte(c.original))
		if string(dl.Original) != c.want {
			t.Errorf("%s: original %s, want %s", c.name, dl.Original, c.want)
		}
		b, err := json.Marshal(dl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var back DeadLetter
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %s: %v", c.name, b, err)
		}
		if c.name == "text" {
			var s string
			if err := json.Unmarshal(back.Original, &s); err != nil || s != c.original {
				t.Errorf("text original reads back as %q (%v), want %q", s, err, c.original)
			}
		}
	}
}

func TestNewDeadLetterFields(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC()
	dl := NewDeadLetter("retry", "exhausted", nil)
	if dl.V != DeadLetterVersion || dl.Source != "retry" || dl.Reason != "exhausted" || dl.Original != nil ||
		dl.At.Before(before) || dl.At.Location() != time.UTC {
		t.Fatalf("%+v", dl)
	}
}

func TestClipOriginal(t *testing.T) {
	t.Parallel()
	small := []byte(`{"a":1}`)
	if got := ClipOriginal(small); !bytes.Equal(got, small) {
		t.Fatalf("small original changed: %s", got)
	}
	big := []byte(`"` + strings.Repeat("x", MaxClippedOriginal) + `"`) // JSON, too long
	got := NewDeadLetter("sender", "too large", ClipOriginal(big)).Original
	var s string
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatal(err)
	}
	if s != string(big[:MaxClippedOriginal]) {
		t.Fatalf("clipped to %d bytes, want the first %d as a string", len(s), MaxClippedOriginal)
	}
}

// The dlq record carries the dead letter as valid JSON under the key given, even when a caller
// set an original that is not JSON.
func TestDeadLetterRecord(t *testing.T) {
	dl := NewDeadLetter("fanout", "why", []byte(`{"a": 1}`))
	dl.EventID, dl.Partner = "evt_1", "p_1"
	r := DeadLetterRecord("x.dlq", "ep_1", dl)
	var back DeadLetter
	if err := json.Unmarshal(r.Value, &back); err != nil {
		t.Fatalf("%s: %v", r.Value, err)
	}
	if r.Topic != "x.dlq" || string(r.Key) != "ep_1" || back.Source != "fanout" || back.EventID != "evt_1" ||
		back.Partner != "p_1" || string(back.Original) != `{"a":1}` {
		t.Fatalf("record %s/%s: %s", r.Topic, r.Key, r.Value)
	}
	dl.Original = []byte("not json")
	if err := json.Unmarshal(DeadLetterRecord("x.dlq", "k", dl).Value, &back); err != nil || string(back.Original) != `"not json"` {
		t.Fatalf("an original that is not JSON: %s (%v)", back.Original, err)
	}
}
