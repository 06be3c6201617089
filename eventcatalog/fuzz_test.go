package eventcatalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// FuzzCheckEvent feeds arbitrary data to every type. CheckEvent never panics, always answers
// with a *outbox.ValidationError or nil, keeps its message short, accepts only JSON objects,
// and refuses every non-object.
func FuzzCheckEvent(f *testing.F) {
	c, err := eventcatalog.New()
	if err != nil {
		f.Fatal(err)
	}
	types := eventcatalog.Types()
	for i, et := range types {
		f.Add(uint8(i), []byte(et.Example))
		f.Add(uint8(i), bytes.Replace(et.Example, []byte(`"`), []byte(`'`), 1))
		f.Add(uint8(i), bytes.ReplaceAll(et.Example, []byte(`"USD"`), []byte(`5.0`)))
	}
	f.Add(uint8(0), []byte(`[]`))
	f.Add(uint8(0), []byte(`null`))
	f.Add(uint8(0), []byte(``))
	f.Add(uint8(0), []byte(`{"customer_id":"cus_1","status":"active","created_at":"2026-03-01T23:59:60Z"}`))
	f.Add(uint8(0), []byte(`{"customer_id":"cus_1"} {}`))
	f.Fuzz(func(t *testing.T, i uint8, data []byte) {
		et := types[int(i)%len(types)]
		err := c.CheckEvent(outbox.Event{Type: et.Type, SchemaVersion: et.SchemaVersion, Data: data})
		isObject := len(data) == 0 || (json.Valid(data) && bytes.TrimLeft(data, " \t\r\n")[0] == '{')
		if err == nil {
			if !isObject {
				t.Fatalf("%s accepted %q, not a JSON object", et.Type, data)
			}
			return
		}
		var verr *outbox.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidData) {
			t.Fatalf("%s: %v is not a ValidationError for invalid data", et.Type, err)
		}
		if len(err.Error()) > 600 {
			t.Fatalf("%s: message of %d bytes: %s", et.Type, len(err.Error()), err)
		}
		if !isObject && verr.Field != "data" {
			t.Fatalf("%s: non-object %q refused at %s", et.Type, data, verr.Field)
		}
	})
}
