package console

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookstream/hookstream/adminclient"
)

// The endpoint form sets everything the API sets on an endpoint (POST and PATCH
// /v1/partners/{pid}/endpoints): the console only turns the form's text into the API's JSON
// (a list from a comma-separated line, seconds from "90s"), and the API's own validation
// decides what is acceptable. Its refusals come back per field (the problem's errors) and are
// shown beside the fields they name.
//
// Secrets typed into the form (an auth header value, a basic password, an OAuth client secret,
// a client certificate's private key) are write-only, as in the API: they are sent and never
// written back into a page, not even into the form shown again after a refusal.

// endpointForm is the create and edit form, as typed.
type endpointForm struct {
	PID, EID string
	Edit     bool

	URL, Description, EventTypes string
	SchemaVersion                string // empty on creation: the newest
	SignatureScheme, WasScheme   string // WasScheme: the scheme before the edit
	MaxInFlight, RateLimit       string
	Ordering                     string // none, bounded or strict
	Filter                       string

	RetryDelays, RetryAttempts, RetryClientErrors, RetryEventTypes string

	Headers string // one "Name: value" per line

	// AuthType is keep (edit: the current authentication stays), none, header, basic or oauth2.
	AuthType, CurrentAuth                                                string
	AuthHeaderName, AuthUsername, AuthTokenURL, AuthClientID, AuthScopes string
	AuthAudience, AuthClientAuthMethod                                   string
	authValue, authPassword, authClientSecret                            string // write-only
	CertificatePEM                                                       string
	privateKeyPEM                                                        string // write-only
	RemoveCertificate                                                    bool
	CurrentCertificate                                                   string
	EgressProxy                                                          string

	// Errors are the refusals per form field (the API's, or what the console could not read),
	// Error what belongs to no one field.
	Errors     map[string][]string
	Error      string
	KnownTypes []string
	Versions   []int
}

// FieldError is what the form shows beside the field named (one line per refusal).
func (f endpointForm) FieldError(name string) string { return strings.Join(f.Errors[name], "; ") }

func (f *endpointForm) refuse(field, format string, args ...any) {
	if f.Errors == nil {
		f.Errors = map[string][]string{}
	}
	f.Errors[field] = append(f.Errors[field], fmt.Sprintf(format, args...))
}

func readEndpointForm(form url.Values) endpointForm {
	v := form.Get
	t := func(name string) string { return strings.TrimSpace(v(name)) }
	return endpointForm{
		URL: t("url"), Description: v("description"), EventTypes: v("event_types"),
		SchemaVersion: t("schema_version"), SignatureScheme: t("signature_scheme"), WasScheme: t("was_scheme"),
		MaxInFlight: t("max_in_flight"), RateLimit: t("rate_limit_per_sec"), Ordering: t("ordering"),
		Filter:      strings.TrimSpace(v("filter")),
		RetryDelays: t("retry_delays"), RetryAttempts: t("retry_attempts"), RetryClientErrors: t("retry_client_errors"),
		RetryEventTypes: strings.TrimSpace(v("retry_event_types")),
		Headers:         v("headers"),
		AuthType:        t("auth_type"), AuthHeaderName: t("auth_header_name"), AuthUsername: t("auth_username"),
		AuthTokenURL: t("auth_token_url"), AuthClientID: t("auth_client_id"), AuthScopes: t("auth_scopes"),
		AuthAudience: t("auth_audience"), AuthClientAuthMethod: t("auth_client_auth_method"),
		authValue: v("auth_value"), authPassword: v("auth_password"), authClientSecret: v("auth_client_secret"),
		CertificatePEM: strings.TrimSpace(v("certificate_pem")), privateKeyPEM: strings.TrimSpace(v("private_key_pem")),
		RemoveCertificate: v("remove_client_certificate") == "on",
		EgressProxy:       t("egress_proxy"),
	}
}

// fillFrom sets the edit form to the endpoint as the API shows it. Secrets are not shown by
// the API and so not here; the current authentication and certificate are kept unless the
// form replaces or removes them.
func (f *endpointForm) fillFrom(e adminclient.Endpoint) {
	f.URL, f.Description, f.EventTypes = e.URL, e.Description, strings.Join(e.EventTypes, ", ")
	f.SchemaVersion = strconv.Itoa(e.SchemaVersion)
	f.SignatureScheme, f.WasScheme = string(e.SignatureScheme), string(e.SignatureScheme)
	f.MaxInFlight, f.Ordering = strconv.Itoa(e.MaxInFlight), string(e.Ordering)
	if e.RateLimitPerSec != nil {
		f.RateLimit = strconv.FormatFloat(*e.RateLimitPerSec, 'f', -1, 64)
	}
	if e.Filter != nil {
		f.Filter = *e.Filter
	}
	if p := e.RetryPolicy; p != nil {
		if p.DelaysSeconds != nil {
			f.RetryDelays = joinSeconds(*p.DelaysSeconds)
		}
		if p.Attempts != nil {
			f.RetryAttempts = strconv.Itoa(*p.Attempts)
		}
		if p.ClientErrors != nil {
			f.RetryClientErrors = string(*p.ClientErrors)
		}
		if p.EventTypes != nil && len(*p.EventTypes) > 0 {
			b, _ := json.MarshalIndent(*p.EventTypes, "", "  ")
			f.RetryEventTypes = string(b)
		}
	}
	f.Headers = headerLines(e.Headers)
	f.AuthType = "none"
	if a := e.Auth; a != nil {
		f.AuthType, f.CurrentAuth = "keep", describeAuth(a)
		f.AuthHeaderName, f.AuthUsername, f.AuthTokenURL = deref(a.HeaderName), deref(a.Username), deref(a.TokenURL)
		f.AuthClientID, f.AuthAudience = deref(a.ClientID), deref(a.Audience)
		if a.Scopes != nil {
			f.AuthScopes = strings.Join(*a.Scopes, " ")
		}
		if a.ClientAuthMethod != nil {
			f.AuthClientAuthMethod = string(*a.ClientAuthMethod)
		}
	}
	if c := e.ClientCertificate; c != nil {
		f.CurrentCertificate = fmt.Sprintf("%s, issued by %s, valid until %s", c.Subject, c.Issuer, c.NotAfter.UTC().Format("2006-01-02"))
	}
	if e.EgressProxy != nil {
		f.EgressProxy = *e.EgressProxy
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// describeAuth names an endpoint's authentication by what identifies it, never its secret.
func describeAuth(a *adminclient.Auth) string {
	switch a.Type {
	case "header":
		return "header " + deref(a.HeaderName)
	case "basic":
		return "basic, user " + deref(a.Username)
	case "oauth2":
		return "OAuth 2.0 client credentials, client " + deref(a.ClientID) + " at " + deref(a.TokenURL)
	}
	return string(a.Type)
}

func headerLines(h map[string]string) string {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + ": " + h[n] + "\n")
	}
	return b.String()
}

func joinSeconds(ss []float64) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = strconv.FormatFloat(s, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

var listSeparators = regexp.MustCompile(`[\s,]+`)

func splitList(s string) []string {
	out := []string{}
	for _, t := range listSeparators.Split(strings.TrimSpace(s), -1) {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// body is the endpoint's JSON for the API. On creation an empty field is left out (the API's
// default); on edit it is sent as null (back to the default), and what the form keeps (the
// authentication, the certificate, the signature scheme when unchanged) is left out. What the
// console cannot read as the API's types is refused here, per field; nothing else is.
func (f *endpointForm) body() map[string]any {
	b := map[string]any{"url": f.URL, "event_types": splitList(f.EventTypes), "description": f.Description}
	unset := func(name string) {
		if f.Edit {
			b[name] = nil
		}
	}
	if f.Ordering != "" {
		b["ordering"] = f.Ordering
	}
	if f.SchemaVersion != "" {
		n, err := strconv.Atoi(f.SchemaVersion)
		if err != nil {
			f.refuse("schema_version", "must be a whole number")
		}
		b["schema_version"] = n
	}
	if f.SignatureScheme != "" && (!f.Edit || f.SignatureScheme != f.WasScheme) {
		b["signature_scheme"] = f.SignatureScheme
	}
	if f.MaxInFlight == "" {
		unset("max_in_flight")
	} else if n, err := strconv.Atoi(f.MaxInFlight); err != nil {
		f.refuse("max_in_flight", "must be a whole number")
	} else {
		b["max_in_flight"] = n
	}
	if f.RateLimit == "" {
		unset("rate_limit_per_sec")
	} else if x, err := strconv.ParseFloat(f.RateLimit, 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		f.refuse("rate_limit_per_sec", "must be a number of requests per second")
	} else {
		b["rate_limit_per_sec"] = x
	}
	if f.Filter == "" {
		unset("filter")
	} else {
		b["filter"] = f.Filter
	}
	if p := f.retryPolicy(); p != nil {
		b["retry_policy"] = p
	} else {
		unset("retry_policy")
	}
	if h := f.headers(); len(h) > 0 {
		b["headers"] = h
	} else {
		unset("headers")
	}
	switch f.AuthType {
	case "keep":
	case "", "none":
		unset("auth")
	default:
		b["auth"] = f.auth()
	}
	switch {
	case f.CertificatePEM != "" || f.privateKeyPEM != "":
		b["client_certificate"] = map[string]string{"certificate_pem": f.CertificatePEM, "private_key_pem": f.privateKeyPEM}
	case f.RemoveCertificate:
		unset("client_certificate")
	}
	if f.EgressProxy == "" {
		unset("egress_proxy")
	} else {
		b["egress_proxy"] = f.EgressProxy
	}
	return b
}

// retryPolicy is the form's retry policy, nil when it sets nothing (the deployment's).
func (f *endpointForm) retryPolicy() map[string]any {
	p := map[string]any{}
	if f.RetryDelays != "" {
		var delays []float64
		for _, d := range splitList(f.RetryDelays) {
			s, err := parseSeconds(d)
			if err != nil {
				f.refuse("retry_delays", "%q is not a number of seconds or a duration such as 90s, 10m or 1h", d)
				continue
			}
			delays = append(delays, s)
		}
		p["delays_seconds"] = delays
	}
	if f.RetryAttempts != "" {
		n, err := strconv.Atoi(f.RetryAttempts)
		if err != nil {
			f.refuse("retry_attempts", "must be a whole number")
		}
		p["attempts"] = n
	}
	if f.RetryClientErrors != "" {
		p["client_errors"] = f.RetryClientErrors
	}
	if f.RetryEventTypes != "" {
		var rules map[string]json.RawMessage
		if err := json.Unmarshal([]byte(f.RetryEventTypes), &rules); err != nil {
			f.refuse("retry_event_types", `must be a JSON object of rules by event type, e.g. {"customer.*": {"attempts": 3}}`)
		}
		p["event_types"] = rules
	}
	if len(p) == 0 {
		return nil
	}
	return p
}

// parseSeconds reads a delay: a number of seconds, or a Go duration (90s, 10m, 1h30m).
func parseSeconds(s string) (float64, error) {
	if x, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
		return x, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return d.Seconds(), nil
}

// headers reads "Name: value" lines; a name given twice is refused here, since the JSON object
// the API reads could not carry both.
func (f *endpointForm) headers() map[string]string {
	out := map[string]string{}
	for i, line := range strings.Split(f.Headers, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			f.refuse("headers", "line %d has no colon: write one header per line as Name: value", i+1)
			continue
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if _, dup := out[name]; dup {
			f.refuse("headers", "%s is given twice", name)
			continue
		}
		out[name] = value
	}
	return out
}

// auth is the authentication object of the chosen type, made of that type's fields only.
func (f *endpointForm) auth() map[string]any {
	a := map[string]any{"type": f.AuthType}
	switch f.AuthType {
	case "header":
		a["header_name"], a["value"] = f.AuthHeaderName, f.authValue
	case "basic":
		a["username"], a["password"] = f.AuthUsername, f.authPassword
	case "oauth2":
		a["token_url"], a["client_id"], a["client_secret"] = f.AuthTokenURL, f.AuthClientID, f.authClientSecret
		if scopes := splitList(f.AuthScopes); len(scopes) > 0 {
			a["scopes"] = scopes
		}
		if f.AuthAudience != "" {
			a["audience"] = f.AuthAudience
		}
		if f.AuthClientAuthMethod != "" {
			a["client_auth_method"] = f.AuthClientAuthMethod
		}
	}
	return a
}

// formField names the form field an API field error belongs to ("" for none: shown above the
// form).
func formField(apiField string) string {
	first, _, _ := strings.Cut(apiField, ".")
	first, _, _ = strings.Cut(first, "[")
	switch first {
	case "url", "description", "schema_version", "max_in_flight", "rate_limit_per_sec", "filter", "egress_proxy",
		"signature_scheme", "headers", "client_certificate", "event_types":
		return first
	case "ordering", "ordered":
		return "ordering"
	case "retry_policy":
		rest := strings.TrimPrefix(apiField, "retry_policy.")
		switch {
		case strings.HasPrefix(rest, "event_types"):
			return "retry_event_types"
		case strings.HasPrefix(rest, "attempts"):
			return "retry_attempts"
		case strings.HasPrefix(rest, "client_errors"):
			return "retry_client_errors"
		}
		return "retry_delays"
	case "auth":
		rest := strings.TrimPrefix(apiField, "auth")
		rest = strings.TrimPrefix(rest, ".")
		rest, _, _ = strings.Cut(rest, "[")
		rest, _, _ = strings.Cut(rest, ".")
		switch rest {
		case "header_name", "value", "username", "password", "token_url", "client_id", "client_secret", "scopes",
			"audience", "client_auth_method":
			return "auth_" + rest
		}
		return "auth_type"
	}
	return ""
}

// refusedBy takes the API's refusal pe into the form: each field error beside its field, the
// rest above the form.
func (f *endpointForm) refusedBy(pe *pageError) {
	placed := false
	for _, fe := range pe.fields {
		if name := formField(fe.Field); name != "" {
			f.refuse(name, "%s: %s", fe.Field, fe.Detail)
			placed = true
		}
	}
	if pe.code == "url_refused" {
		// The egress policy's refusal names no field: the message says which URL it was.
		name := "url"
		if strings.HasPrefix(pe.msg, "auth.token_url") {
			name = "auth_token_url"
		}
		f.refuse(name, "%s", pe.msg)
		placed = true
	}
	if !placed {
		f.Error = pe.msg
		return
	}
	f.Error = "The API refused the endpoint; the reasons are shown beside the fields."
	for _, fe := range pe.fields {
		if formField(fe.Field) == "" {
			f.Error += " " + fe.Field + ": " + fe.Detail + "."
		}
	}
}

// retryRuleText states one level of a retry policy for people: "delays 5 s, 1 min; 3 attempts;
// other 4xx: stop", with what it leaves to the level above named as inherited.
func retryRuleText(delays *[]float64, attempts *int, clientErrors any) string {
	var parts []string
	if delays != nil {
		ds := make([]string, len(*delays))
		for i, s := range *delays {
			ds[i] = formatSeconds(s)
		}
		parts = append(parts, "delays "+strings.Join(ds, ", "))
	}
	if attempts != nil {
		parts = append(parts, fmt.Sprintf("%d attempts in all", *attempts))
	}
	var ce string
	switch v := clientErrors.(type) {
	case *adminclient.RetryPolicyClientErrors:
		if v != nil {
			ce = string(*v)
		}
	case *adminclient.RetryRuleClientErrors:
		if v != nil {
			ce = string(*v)
		}
	}
	if ce != "" {
		parts = append(parts, "other 4xx: "+ce)
	}
	if len(parts) == 0 {
		return "everything inherited"
	}
	return strings.Join(parts, "; ")
}

// formatSeconds shows a delay in its largest whole unit: "30 s", "10 min", "6 h", else "90 s".
func formatSeconds(s float64) string {
	switch {
	case s >= 3600 && math.Mod(s, 3600) == 0:
		return fmt.Sprintf("%g h", s/3600)
	case s >= 60 && math.Mod(s, 60) == 0:
		return fmt.Sprintf("%g min", s/60)
	}
	return fmt.Sprintf("%g s", s)
}
