package testenv

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
)

// CatalogData returns the event catalog's example data of typ with fields set over it (nil
// sets none). The example is valid against the type's schema and the schemas accept additional
// properties, so cdc, which checks every outbox row against the catalog, publishes an event
// carrying it as long as fields keep the required ones valid. The test fails when the catalog
// has no typ: a test event of an unknown type is dead-lettered, never delivered.
func CatalogData(t testing.TB, typ string, fields map[string]any) json.RawMessage {
	t.Helper()
	et, ok := eventcatalog.Lookup(typ)
	if !ok {
		t.Fatalf("the event catalog has no type %s", typ)
	}
	if len(fields) == 0 {
		return et.Example
	}
	var data map[string]any
	if err := json.Unmarshal(et.Example, &data); err != nil {
		t.Fatalf("example of %s: %v", typ, err)
	}
	maps.Copy(data, fields)
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatalf("data of %s: %v", typ, err)
	}
	return b
}
