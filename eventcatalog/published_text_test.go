package eventcatalog_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
)

// internalReference is what readers of the published catalog cannot follow: the project's
// design sections, requirement ids and issue numbers.
var internalReference = regexp.MustCompile(`design\.md|\bR[0-9]+\b|issue [0-9]`)

// The catalog is published to partners and operators (the API, the console): its descriptions
// and schemas cite nothing only the project's own documents explain.
func TestPublishedCatalogCitesNoInternalDocuments(t *testing.T) {
	for name, v := range map[string]any{"types": eventcatalog.Types(), "operator types": eventcatalog.OperatorTypes(),
		"envelope": eventcatalog.EnvelopeSchema()} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if m := internalReference.Find(b); m != nil {
			t.Errorf("the %s cite %q", name, m)
		}
	}
}
