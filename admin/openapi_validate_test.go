package admin

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestOpenAPIWebhooksMatchCatalog: the document's webhooks section names every type of the event
// catalog, each with its data schema, and is what make generate writes from the catalog.
func TestOpenAPIWebhooksMatchCatalog(t *testing.T) {
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
	types := eventcatalog.Types()
	if len(doc.Webhooks) != len(types) {
		t.Fatalf("%d webhooks, %d catalog types", len(doc.Webhooks), len(types))
	}
	for _, et := range types {
		item := doc.Webhooks[et.Type]
		if item == nil || item.Post == nil || item.Post.RequestBody == nil {
			t.Errorf("webhooks has no POST for %s", et.Type)
			continue
		}
		body := item.Post.RequestBody.Value.Content.Get("application/json")
		got, _ := json.Marshal(body.Schema.Value.AllOf[1].Value.Properties["data"].Value)
		var a, b any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal(et.Schema, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("webhook %s: data schema %s, catalog %s", et.Type, got, et.Schema)
		}
		// The catalog's example, in its envelope, is a valid body of the webhook.
		ev, _ := eventcatalog.ExampleEvent(et.Type, "acme")
		ex, _ := json.Marshal(outbox.Envelope{EventID: outbox.NewEventID(), Type: ev.Type, OccurredAt: time.Now().UTC(),
			PartnerID: ev.PartnerID, Subject: ev.Subject, SchemaVersion: et.SchemaVersion, Data: ev.Data})
		var v any
		_ = json.Unmarshal(ex, &v)
		if err := body.Schema.Value.VisitJSON(v); err != nil {
			t.Errorf("webhook %s: the catalog's example does not match its body schema: %v", et.Type, err)
		}
	}
}
