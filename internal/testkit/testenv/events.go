package testenv

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
)

// CatalogData returns the event catalog's example data of typ in schema version 1, the version
// of an outbox.Event that names none, with fields set over it (nil sets none). The example is
// valid against that version's schema and the schemas accept additional properties, so cdc,
// which checks every outbox row against the catalog, publishes an event carrying it as long as
// fields keep the required ones valid. The test fails when the catalog has no typ: a test event
// of an unknown type is dead-lettered, never delivered. CatalogVersionData gives another version.
func CatalogData(t testing.TB, typ string, fields map[string]any) json.RawMessage {
	t.Helper()
	return CatalogVersionData(t, typ, 1, fields)
}

// CatalogVersionData is CatalogData in the given schema version of typ; an event carrying it
// names that version (outbox.Event.SchemaVersion).
func CatalogVersionData(t testing.TB, typ string, version int, fields map[string]any) json.RawMessage {
	t.Helper()
	et, ok := eventcatalog.Lookup(typ)
	if !ok {
		t.Fatalf("the event catalog has no type %s", typ)
	}
	v, ok := et.Version(version)
	if !ok {
		t.Fatalf("the event catalog has no version %d of %s", version, typ)
	}
	if len(fields) == 0 {
		return v.Example
	}
	var data map[string]any
	if err := json.Unmarshal(v.Example, &data); err != nil {
		t.Fatalf("example of %s: %v", typ, err)
	}
	maps.Copy(data, fields)
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatalf("data of %s: %v", typ, err)
	}
	return b
}
