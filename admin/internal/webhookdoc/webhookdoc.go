// Package webhookdoc writes the webhooks section of the admin API's OpenAPI 3.1 document from
// the event catalog: one operation per published version of every event type (the newest named
// by the type, an older one by the type and ".v" and its number), whose request body is the
// envelope with that version's data schema, the Standard Webhooks headers and the response policy
// a receiver is held to (design.md section 7). make generate runs it (go generate ./admin);
// admin's TestOpenAPIWebhooksMatchCatalog fails when the committed document is not what it makes.
package webhookdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/hookstream/hookstream/eventcatalog"
)

// member is the webhooks member of the document as this package writes it: the last
// top-level member, indented as the rest of the file (two spaces, ASCII only).
const member = ",\n  \"webhooks\": "

// Rewrite returns doc with its webhooks section made from the catalog, everything else kept
// byte for byte. doc must be a JSON object written with two-space indentation.
func Rewrite(doc []byte) ([]byte, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(doc, &probe); err != nil {
		return nil, fmt.Errorf("webhookdoc: the document is not a JSON object: %w", err)
	}
	head := doc
	if i := bytes.Index(doc, []byte(member)); i >= 0 {
		head = doc[:i]
	} else {
		head = bytes.TrimRight(doc, " \n")
		if !bytes.HasSuffix(head, []byte("}")) {
			return nil, errors.New("webhookdoc: the document does not end its object")
		}
		head = bytes.TrimRight(head[:len(head)-1], " \n")
	}
	section, err := Section()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Write(head)
	out.WriteString(member)
	if err := json.Indent(&out, section, "  ", "  "); err != nil {
		return nil, err
	}
	out.WriteString("\n}\n")
	return []byte(asciiOnly(out.String())), nil
}

type (
	operation struct {
		OperationID string              `json:"operationId"`
		Summary     string              `json:"summary"`
		Description string              `json:"description"`
		Tags        []string            `json:"tags"`
		Parameters  []parameter         `json:"parameters"`
		RequestBody requestBody         `json:"requestBody"`
		Responses   map[string]response `json:"responses"`
		Security    []struct{}          `json:"security"`
	}
	parameter struct {
		Name        string `json:"name"`
		In          string `json:"in"`
		Required    bool   `json:"required"`
		Description string `json:"description"`
		Schema      any    `json:"schema"`
	}
	requestBody struct {
		Required bool                 `json:"required"`
		Content  map[string]mediaType `json:"content"`
	}
	mediaType struct {
		Schema  any             `json:"schema"`
		Example json.RawMessage `json:"example,omitempty"`
	}
	response struct {
		Description string `json:"description"`
	}
)

// Section is the webhooks object: event type → {"post": operation}.
func Section() ([]byte, error) {
	var envelope map[string]any
	if err := json.Unmarshal(eventcatalog.EnvelopeSchema(), &envelope); err != nil {
		return nil, err
	}
	headers := []parameter{
		{"webhook-id", "header", true, "the event id (evt_…): the same on every retry and replay; deduplicate on it", map[string]any{"type": "string"}},
		{"webhook-timestamp", "header", true, "the attempt's time in Unix seconds; refuse it when far from now (5 minutes)", map[string]any{"type": "string", "pattern": "^[0-9]+$"}},
		{"webhook-signature", "header", true, "v1,<base64 HMAC-SHA256 of id.timestamp.body> per active secret, space separated; during a secret rotation both secrets sign", map[string]any{"type": "string"}},
	}
	responses := map[string]response{
		"2XX":     {"delivered: the receiver has durably accepted the event"},
		"410":     {"the endpoint is disabled at once; no further deliveries"},
		"default": {"retried on the endpoint's schedule: 408, 425, 429 and 5xx honouring Retry-After, other 4xx as a persistent receiver error; 3xx is never followed"},
	}
	out := map[string]map[string]operation{}
	for _, et := range eventcatalog.Types() {
		for _, v := range et.Versions {
			var data any
			if err := json.Unmarshal(v.Schema, &data); err != nil {
				return nil, fmt.Errorf("webhookdoc: schema of %s v%d: %w", et.Type, v.SchemaVersion, err)
			}
			body := map[string]any{
				"allOf": []any{envelope, map[string]any{
					"type": "object",
					"properties": map[string]any{
						"type":           map[string]any{"const": et.Type},
						"schema_version": map[string]any{"const": v.SchemaVersion},
						"data":           data,
					},
				}},
			}
			// The newest version is named by the type; an older one by the type and its
			// version, so every version a partner can be pinned to receive is listed (R14).
			name := et.Type
			if v.SchemaVersion != et.SchemaVersion {
				name = fmt.Sprintf("%s.v%d", et.Type, v.SchemaVersion)
			}
			description := fmt.Sprintf("Sent to every active endpoint of the partner subscribed to %s (exactly, by a prefix wildcard, or *), signed with Standard Webhooks; schema version %d, received by endpoints pinned to %s.",
				et.Type, v.SchemaVersion, pins(et.Type, v.SchemaVersion))
			if v.Changes != "" {
				description += " Changed from the version before: " + v.Changes
			}
			out[name] = map[string]operation{"post": {
				OperationID: "webhook." + name,
				Summary:     et.Description,
				Description: description,
				Tags:        []string{et.Category},
				Parameters:  headers,
				RequestBody: requestBody{Required: true, Content: map[string]mediaType{"application/json": {Schema: body}}},
				Responses:   responses,
				Security:    []struct{}{},
			}}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// pins lists the schema versions an endpoint may be pinned to that receive version of typ:
// "1", "2 and 3".
func pins(typ string, version int) string {
	var out []string
	for _, p := range eventcatalog.PinVersions() {
		if eventcatalog.PinnedVersion(typ, p) == version {
			out = append(out, fmt.Sprint(p))
		}
	}
	if len(out) < 2 {
		return strings.Join(out, "")
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// asciiOnly escapes every non-ASCII character as \uXXXX, as the rest of the document is
// written. Only JSON strings hold such characters, so the escape is always inside one.
func asciiOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}
