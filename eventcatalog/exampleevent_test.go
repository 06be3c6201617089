package eventcatalog_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
)

// Every type's example event fits its schema, carries the example's fields with fresh ids (new
// on every call), and is about a resource its data names.
func TestExampleEventOfEveryType(t *testing.T) {
	t.Parallel()
	cat := eventcatalog.Published()
	for _, et := range eventcatalog.Types() {
		a, ok := eventcatalog.ExampleEvent(et.Type, "acme")
		if !ok {
			t.Fatalf("no example event of %s", et.Type)
		}
		b, _ := eventcatalog.ExampleEvent(et.Type, "acme")
		if err := cat.CheckEvent(a); err != nil {
			t.Errorf("%s: the example event is refused: %v", et.Type, err)
		}
		if a.PartnerID != "acme" || a.Type != et.Type || a.ID != "" || a.SchemaVersion != et.SchemaVersion {
			t.Errorf("%s: event %+v", et.Type, a)
		}
		var example, da, db map[string]any
		for raw, m := range map[string]*map[string]any{string(et.Example): &example, string(a.Data): &da, string(b.Data): &db} {
			if err := json.Unmarshal([]byte(raw), m); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(slices.Sorted(maps.Keys(da)), slices.Sorted(maps.Keys(example))) {
			t.Errorf("%s: fields %v, the example's %v", et.Type, slices.Sorted(maps.Keys(da)), slices.Sorted(maps.Keys(example)))
		}
		ids := 0
		for k, v := range example {
			if !strings.HasSuffix(k, "_id") {
				if !equalJSON(v, da[k]) { // the other fields are the example's
					t.Errorf("%s: %s is %v, the example's %v", et.Type, k, da[k], v)
				}
				continue
			}
			ids++
			prefix, _, _ := strings.Cut(v.(string), "_")
			if da[k] == v || da[k] == db[k] || !strings.HasPrefix(da[k].(string), prefix+"_") {
				t.Errorf("%s: %s is %v, then %v; want a fresh id after %s_ each time (the example's: %v)", et.Type, k, da[k], db[k], prefix, v)
			}
		}
		if ids == 0 {
			t.Errorf("%s: the example has no id to make fresh", et.Type)
		}
		if id, ok := da[a.Subject.Type+"_id"]; !ok || id != a.Subject.ID {
			t.Errorf("%s: subject %+v is not named by the data %s", et.Type, a.Subject, a.Data)
		}
	}
	if _, ok := eventcatalog.ExampleEvent("invoice.paid", "acme"); ok {
		t.Error("an example event of a type the catalog lacks")
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
