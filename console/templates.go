package console

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"strings"
	"time"
)

// parsePages parses each page template with the layout, so every page is one template set
// executed from "base".
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := path.Base(n)
		if name == "base.html" {
			continue
		}
		t, err := template.New(name).Funcs(templateFuncs).ParseFS(templateFiles, "templates/base.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

var templateFuncs = template.FuncMap{
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *time.Time:
			if v == nil || v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return "—"
	},
	"int": func(p *int) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprint(*p)
	},
	"str": func(p *string) string {
		if p == nil || *p == "" {
			return "—"
		}
		return *p
	},
	"float": func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprint(*p)
	},
	"pretty": func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	},
	"path": pathOf,
	// field is what the "fielderror" template of the endpoint form needs: the form and the
	// name of one of its fields.
	"field":     func(f endpointForm, name string) fieldRef { return fieldRef{F: f, Name: name} },
	"latency":   formatLatency,
	"authText":  describeAuth,
	"retryRule": retryRuleText,
	"inc":       func(i int) int { return i + 1 },
	"join":      func(ss []string) string { return strings.Join(ss, ", ") },
}

type fieldRef struct {
	F    endpointForm
	Name string
}
