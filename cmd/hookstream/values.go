package main

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/commalist"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/topics"
)

// The typed flag values of the settings. Each Set says what it expected; the flag package puts
// the flag's name before it, newCommandFlags the variable's. The receiver may be nil in String,
// as package flag allows.

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string {
	if v == nil {
		return ""
	}
	return string(*v)
}
func (*stringValue) typeName() string { return "string" }

type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string { return strconv.FormatBool(v != nil && bool(*v)) }
func (*boolValue) IsBoolFlag() bool { return true }
func (*boolValue) typeName() string { return "" }

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want an integer")
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string {
	if v == nil {
		return "0"
	}
	return strconv.Itoa(int(*v))
}
func (*intValue) typeName() string { return "int" }

// countValue is an intValue of zero or more.
type countValue int

func (v *countValue) Set(s string) error {
	var n intValue
	if err := n.Set(s); err != nil || n < 0 {
		return errors.New("want a whole number, 0 or more")
	}
	*v = countValue(n)
	return nil
}
func (v *countValue) String() string { return (*intValue)(v).String() }
func (*countValue) typeName() string { return "int" }

type durationValue time.Duration

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 90s, 15m or 720h")
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string {
	if v == nil {
		return "0s"
	}
	return time.Duration(*v).String()
}
func (*durationValue) typeName() string { return "duration" }

// positiveDurationValue is a duration above zero.
type positiveDurationValue time.Duration

func (v *positiveDurationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return errors.New("want a positive duration such as 90s, 15m or 24h")
	}
	*v = positiveDurationValue(d)
	return nil
}
func (v *positiveDurationValue) String() string { return (*durationValue)(v).String() }
func (*positiveDurationValue) typeName() string { return "duration" }

// logRetentionValue is a retention that may be unlimited: a positive duration, forever or -1
// (topics.RetainForever), or empty (0: the command's fallback).
type logRetentionValue time.Duration

func (v *logRetentionValue) Set(s string) error {
	switch s {
	case "":
		*v = 0
		return nil
	case "forever", "-1":
		*v = logRetentionValue(topics.RetainForever)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return errors.New("want a positive duration such as 720h, or forever (-1)")
	}
	*v = logRetentionValue(d)
	return nil
}
func (v *logRetentionValue) String() string {
	switch {
	case v == nil || *v == 0:
		return ""
	case time.Duration(*v) == topics.RetainForever:
		return "forever"
	}
	return time.Duration(*v).String()
}
func (*logRetentionValue) typeName() string { return "duration" }

// listValue is a comma-separated list; blanks around items and empty items are dropped.
type listValue []string

func (v *listValue) Set(s string) error { *v = commalist.Split(s); return nil }
func (v *listValue) String() string {
	if v == nil {
		return ""
	}
	return strings.Join(*v, ",")
}
func (*listValue) typeName() string { return "list" }

// portsValue is a list of ports and port ranges: 443,8443,9000-9100.
type portsValue []int

func (v *portsValue) Set(s string) error {
	ports, err := parsePorts(s)
	if err != nil {
		return err
	}
	*v = ports
	return nil
}
func (v *portsValue) String() string {
	if v == nil {
		return ""
	}
	parts := make([]string, len(*v))
	for i, p := range *v {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, ",")
}
func (*portsValue) typeName() string { return "ports" }

// scheduleValue is a comma-separated list of positive durations.
type scheduleValue []time.Duration

func (v *scheduleValue) Set(s string) error {
	var out []time.Duration
	for _, item := range commalist.Split(s) {
		d, err := time.ParseDuration(item)
		if err != nil || d <= 0 {
			return errors.New(strconv.Quote(item) + " is not a positive duration; want a list such as 5s,1m,1h")
		}
		out = append(out, d)
	}
	*v = out
	return nil
}
func (v *scheduleValue) String() string {
	if v == nil {
		return ""
	}
	parts := make([]string, len(*v))
	for i, d := range *v {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}
func (*scheduleValue) typeName() string { return "durations" }

// choiceValue is one of a few words, such as json or text.
type choiceValue struct {
	v     *string
	words []string
}

// choice is a flag value that sets *v to one of words.
func choice(v *string, words ...string) *choiceValue { return &choiceValue{v: v, words: words} }

func (c *choiceValue) Set(s string) error {
	if !slices.Contains(c.words, s) {
		last := len(c.words) - 1
		return fmt.Errorf("want %s or %s", strings.Join(c.words[:last], ", "), c.words[last])
	}
	*c.v = s
	return nil
}
func (c *choiceValue) String() string {
	if c == nil || c.v == nil {
		return ""
	}
	return *c.v
}
func (c *choiceValue) typeName() string { return strings.Join(c.words, "|") }

// logLevelValue is the least level of the process's log: debug, info, warn or error.
type logLevelValue slog.Level

func (v *logLevelValue) Set(s string) error {
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	l, ok := levels[strings.ToLower(s)]
	if !ok {
		return errors.New("want debug, info, warn or error")
	}
	*v = logLevelValue(l)
	return nil
}
func (v *logLevelValue) String() string {
	if v == nil {
		return ""
	}
	return strings.ToLower(slog.Level(*v).String())
}
func (*logLevelValue) typeName() string { return "debug|info|warn|error" }

// clientErrorsValue is the policy for other 4xx answers: "retry" (true) or "stop" (false).
type clientErrorsValue bool

func (v *clientErrorsValue) Set(s string) error {
	switch s {
	case retrypolicy.ClientErrorsRetry:
		*v = true
	case retrypolicy.ClientErrorsStop:
		*v = false
	default:
		return errors.New("want retry or stop")
	}
	return nil
}
func (v *clientErrorsValue) String() string {
	if v == nil || bool(*v) {
		return retrypolicy.ClientErrorsRetry
	}
	return retrypolicy.ClientErrorsStop
}
func (*clientErrorsValue) typeName() string { return "retry|stop" }

// proxyValue is a forward proxy URL. It prints without its password, so neither -h nor a log of
// the settings shows it. Set never fails: the flag package would quote the refused value, password
// and all, so a problem is kept in *err and reported by settings.egressConfig without the value.
type proxyValue struct {
	u   **url.URL
	err *error
}

func (v *proxyValue) Set(s string) error {
	*v.u, *v.err = nil, nil
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	*v.u, *v.err = parseProxy(s)
	if *v.err != nil {
		*v.err = fmt.Errorf("HOOKSTREAM_EGRESS_PROXY (--egress-proxy): %w", *v.err)
	}
	return nil
}

func (v *proxyValue) String() string {
	if v == nil || v.u == nil || *v.u == nil {
		return ""
	}
	return egress.ProxyDisplay(*v.u)
}
func (*proxyValue) typeName() string { return "url" }

// proxiesValue is a list of named forward proxies: name=http://host:port,... Like proxyValue, it
// keeps a problem in *err rather than failing Set.
type proxiesValue struct {
	m   *map[string]*url.URL
	err *error
}

func (v *proxiesValue) Set(s string) error {
	*v.m, *v.err = nil, nil
	out, err := parseProxies(s)
	if err != nil {
		*v.err = fmt.Errorf("HOOKSTREAM_EGRESS_PROXIES (--egress-proxies): %w", err)
		return nil
	}
	*v.m = out
	return nil
}

func parseProxies(s string) (map[string]*url.URL, error) {
	out := map[string]*url.URL{}
	for _, item := range commalist.Split(s) {
		name, raw, ok := strings.Cut(item, "=")
		if !ok || !egress.ValidProxyName(name) {
			return nil, fmt.Errorf("%q is not name=http://host:port with a name of lowercase letters, digits, _ and -", truncateSetting(item))
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("proxy %s is given twice", name)
		}
		u, err := parseProxy(raw)
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", name, err)
		}
		out[name] = u
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func (v *proxiesValue) String() string {
	if v == nil || v.m == nil {
		return ""
	}
	names := slices.Sorted(maps.Keys(*v.m))
	items := make([]string, len(names))
	for i, n := range names {
		items[i] = n + "=" + egress.ProxyDisplay((*v.m)[n])
	}
	return strings.Join(items, ",")
}
func (*proxiesValue) typeName() string { return "list" }

// parseProxy reads a proxy URL; its errors never quote it (it may hold a password). The
// egress configuration's Validate checks the form.
func parseProxy(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, errors.New("not a proxy URL like http://proxy.internal:3128")
	}
	return u, nil
}

// truncateSetting keeps a setting's text short in an error; only the part before "=" is kept
// when there is one, so a URL with a password is not repeated.
func truncateSetting(s string) string {
	if name, _, ok := strings.Cut(s, "="); ok {
		s = name + "=…"
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
