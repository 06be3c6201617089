package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/hookstream/hookstream/admin/internal/webhookdoc"
	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// TestOpenAPIDocumentValidates holds openapi.json to the OpenAPI 3.1 specification with a
// standard validator (kin-openapi): its structure, every $ref, every schema (JSON Schema 2020-12
// as 3.1 has it), every example against its schema, and the webhooks section.
func TestOpenAPIDocumentValidates(t *testing.T) {
	t.Parallel()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPIDocument)
	if err != nil {
		t.Fatalf("openapi.json does not load: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi.json is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("openapi.json does not validate: %v", err)
	}
}

// TestOpenAPIWebhooksMatchCatalog: the document's webhooks section names every published version
// of every type of the event catalog (the newest by the type, an older one by the type and
// ".v" and its number, R14), each with its version's data schema, and is what make generate
// writes from the catalog. Each version's example, in its envelope, is a valid body of its
// webhook and of no other version's.
func TestOpenAPIWebhooksMatchCatalog(t *testing.T) {
	t.Parallel()
	want, err := webhookdoc.Rewrite(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, openAPIDocument) {
		t.Fatal("the webhooks section of openapi.json is not what the event catalog makes (run make generate)")
	}
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	versions := 0
	for _, et := range eventcatalog.Types() {
		versions += len(et.Versions)
		for _, ver := range et.Versions {
			name := et.Type
			if ver.SchemaVersion != et.SchemaVersion {
				name = fmt.Sprintf("%s.v%d", et.Type, ver.SchemaVersion)
			}
			item := doc.Webhooks[name]
			if item == nil || item.Post == nil || item.Post.RequestBody == nil {
				t.Errorf("webhooks has no POST %s for %s v%d", name, et.Type, ver.SchemaVersion)
				continue
			}
			body := item.Post.RequestBody.Value.Content.Get("application/json")
			got, _ := json.Marshal(body.Schema.Value.AllOf[1].Value.Properties["data"].Value)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal(ver.Schema, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("webhook %s: data schema %s, catalog %s", name, got, ver.Schema)
			}
			for _, other := range et.Versions {
				ex, _ := json.Marshal(outbox.Envelope{EventID: outbox.NewEventID(), Type: et.Type, OccurredAt: time.Now().UTC(),
					PartnerID: "acme", Subject: outbox.Subject{Type: "customer", ID: "cus_1"}, SchemaVersion: other.SchemaVersion, Data: other.Example})
				var v any
				_ = json.Unmarshal(ex, &v)
				err := body.Schema.Value.VisitJSON(v)
				if other.SchemaVersion == ver.SchemaVersion && err != nil {
					t.Errorf("webhook %s: the catalog's example does not match its body schema: %v", name, err)
				}
				if other.SchemaVersion != ver.SchemaVersion && err == nil {
					t.Errorf("webhook %s accepts the example of version %d", name, other.SchemaVersion)
				}
			}
		}
	}
	if len(doc.Webhooks) != versions {
		t.Fatalf("%d webhooks, %d versions of catalog types", len(doc.Webhooks), versions)
	}
	if doc.Webhooks["usage.finalized.v1"] == nil {
		t.Fatal("usage.finalized v1 is not in webhooks")
	}
}
