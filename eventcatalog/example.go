package eventcatalog

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/hookstream/hookstream/outbox"
)

// ExampleEvent is the catalog's example of typ as an event of partnerID, for trying a receiver
// (hookstream trigger): the example data with every identifier in it made fresh (the prefix
// kept and a new ULID after it: cus_8f2k1 becomes cus_01JB…), and the subject it is about
// named by those ids. Its ID is empty, so outbox.Append gives it a fresh one. It is valid
// against the type's schema, as the example is. False when the catalog has no typ.
func ExampleEvent(typ, partnerID string) (outbox.Event, bool) {
	et, ok := Lookup(typ)
	if !ok {
		return outbox.Event{}, false
	}
	var data map[string]any
	dec := json.NewDecoder(bytes.NewReader(et.Example))
	dec.UseNumber() // integers keep their digits
	if err := dec.Decode(&data); err != nil {
		panic("eventcatalog: example of " + typ + ": " + err.Error()) // the catalog is a literal
	}
	for k, v := range data {
		s, isString := v.(string)
		prefix, _, isID := strings.Cut(s, "_")
		if isString && isID && strings.HasSuffix(k, "_id") {
			data[k] = prefix + "_" + ulid.Make().String()
		}
	}
	return outbox.Event{PartnerID: partnerID, Type: typ, Subject: subjectOf(typ, data),
		SchemaVersion: et.SchemaVersion, Data: mustJSON(data)}, true
}

// subjectOf is the resource an event of typ is about: the one its type is named after when data
// holds its id (api_key.created: the API key), else the customer (balance.*: a customer's
// balance), else the endpoint (webhook.test); a type with none of them is about a fresh one of
// its own name.
func subjectOf(typ string, data map[string]any) outbox.Subject {
	resource, _, _ := strings.Cut(typ, ".")
	for _, r := range []string{resource, "customer", "endpoint"} {
		if id, ok := data[r+"_id"].(string); ok {
			return outbox.Subject{Type: r, ID: id}
		}
	}
	return outbox.Subject{Type: resource, ID: resource + "_" + ulid.Make().String()}
}
