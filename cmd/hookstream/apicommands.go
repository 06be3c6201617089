package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/console"
)

// The API commands (endpoints, deliveries) are the admin API from a terminal, over the generated
// client: what curl did, with the partner, the token and the output taken care of.

const endpointsUsage = `usage: hookstream endpoints <subcommand> [arguments] [flags]

A partner's endpoints, through the admin API at --admin-url.

  list                           the partner's endpoints
  create --url URL --events T,…  a new endpoint (--filter, --retry-policy, --signature-scheme); a v1 secret is shown in this answer only
  get <endpoint-id>              one endpoint
  disable <endpoint-id>          stop delivering to it (--reason; an endpoint.disabled event)
  enable <endpoint-id>           deliver to it again
  rotate <endpoint-id>           a new secret (v1, shown once) or key pair (v1a, its public key); the old ones sign for --overlap more
  test <endpoint-id>             send it a webhook.test event, to it alone
` + apiUsageTail

const deliveriesUsage = `usage: hookstream deliveries <subcommand> [arguments] [flags]

A partner's delivery history, through the admin API at --admin-url.

  list <endpoint-id>             the endpoint's deliveries, newest first (--state, --since, --until, --type)
  get <delivery-id>              a delivery with every attempt
  replay <delivery-id>           one new attempt of it, same event id
` + apiUsageTail

const apiUsageTail = `
The token is --api-key (a partner API key, which acts on its own partner only), else
--admin-token (the operator's), else the one hookstream dev keeps in --data-dir. --partner
names the partner; without it, the API key's own, or the deployment's only partner.
--operator acts on the operator's own endpoints and deliveries instead (operator events,
subscribed to operator.*), with the operator token.
The config file HOOKSTREAM_CONFIG (default ~/.config/hookstream/config; mode 600, or it is
refused) may hold them as key = value lines: admin_url, api_key, admin_token, partner. A flag
wins over a variable, a variable over the file.
--output json prints the API's JSON answer as it came (a list: one page, with next_cursor).
'hookstream <command> <subcommand> -h' lists the subcommand's own flags too.
`

// apiSubcommand is one subcommand of an API command.
type apiSubcommand struct {
	name string
	args []string // the names of its arguments, all required
	// flags adds its own flags and returns what runs it.
	flags func(fs *commandFlags) func(ctx context.Context, api *apiSession, args []string) error
}

func runEndpoints(ctx context.Context, args []string, out io.Writer) error {
	return runAPICommand(ctx, "endpoints", endpointsUsage, endpointSubcommands, args, out)
}

func runDeliveries(ctx context.Context, args []string, out io.Writer) error {
	return runAPICommand(ctx, "deliveries", deliveriesUsage, deliverySubcommands, args, out)
}

func runAPICommand(ctx context.Context, name, usage string, subs []apiSubcommand, args []string, out io.Writer) error {
	fs := flagsOf(name)
	fs.usage = usage
	var names []string
	for _, sc := range subs {
		names = append(names, sc.name)
	}
	want := strings.Join(names, ", ")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			_, err := fs.parse(args[:1], out)
			return err
		}
		return &usageError{err: fmt.Errorf("%s: want a subcommand: %s", name, want), help: usage}
	}
	for _, sc := range subs {
		if sc.name == args[0] {
			fs.FlagSet.Init(name+" "+sc.name, fs.ErrorHandling())
			return runAPISubcommand(ctx, fs, name+" "+sc.name, sc, args[1:], out)
		}
	}
	return &usageError{err: fmt.Errorf("%s: unknown subcommand %q, want %s", name, args[0], want), help: usage}
}

// runPlainAPICommand runs an API command without subcommands (feed, replay): flags adds its own
// flags and returns what runs it, as an apiSubcommand's.
func runPlainAPICommand(ctx context.Context, name, usage string, flags func(fs *commandFlags) func(context.Context, *apiSession, []string) error, args []string, out io.Writer) error {
	fs := flagsOf(name)
	fs.usage = usage
	return runAPISubcommand(ctx, fs, name, apiSubcommand{flags: flags}, args, out)
}

// runAPISubcommand parses the flags of sc (with --partner and --output) from args and runs it
// as the command line `hookstream <title>`.
func runAPISubcommand(ctx context.Context, fs *commandFlags, title string, sc apiSubcommand, args []string, out io.Writer) error {
	partner := fs.String("partner", "", "the partner; empty: the API key's own, or the deployment's only partner")
	operatorOwn := new(bool)
	if strings.HasPrefix(title, "endpoints ") || strings.HasPrefix(title, "deliveries ") {
		fs.BoolVar(operatorOwn, "operator", false, "the operator's own endpoints and deliveries (operator events; the operator token), not a partner's")
	}
	output := "table"
	fs.Var(choice(&output, "json", "table"), "output", "json or table")
	runSub := sc.flags(fs)
	s, positional, err := fs.parseWithArgs(args, out, len(sc.args))
	if err != nil {
		return err
	}
	if len(positional) < len(sc.args) {
		return fs.usageError(fmt.Errorf("want %s", strings.Join(sc.args, " ")))
	}
	if fs.check != nil {
		if err := fs.check(); err != nil {
			return fs.usageError(err)
		}
	}
	if *operatorOwn {
		if *partner != "" {
			return fs.usageError(errors.New("--operator and --partner: name one"))
		}
		*partner = adminclient.OperatorPartnerID // the client sends it to /v1/operator/...
	}
	_, api, err := openAPISession(ctx, fs, s, *partner, output, out)
	if err != nil {
		return fmt.Errorf("%s: %w", title, err)
	}
	if err := runSub(ctx, api, positional); err != nil {
		return fmt.Errorf("%s: %w", title, err)
	}
	return nil
}

// apiSession is the client, the partner and the output of one API command.
type apiSession struct {
	c       *adminclient.ClientWithResponses
	partner string
	json    bool
	out     io.Writer
}

// openAPISession completes s with the config file, then opens the API session of partner (see
// newAPISession); it returns the completed settings.
func openAPISession(ctx context.Context, fs *commandFlags, s settings, partner, output string, out io.Writer) (settings, *apiSession, error) {
	s, partner, err := withConfigFile(fs, s, partner)
	if err != nil {
		return s, nil, err
	}
	api, err := newAPISession(ctx, s, partner, output, out)
	return s, api, err
}

// newAPISession makes the client with the token the settings give and finds the partner.
func newAPISession(ctx context.Context, s settings, partner, output string, out io.Writer) (*apiSession, error) {
	token := s.APIKey
	if token == "" {
		token = s.AdminToken
	}
	if token == "" {
		b, err := os.ReadFile(filepath.Join(s.DataDir, "dev-admin-token"))
		if err != nil {
			return nil, errors.New("no token: set HOOKSTREAM_API_KEY (a partner API key) or HOOKSTREAM_ADMIN_TOKEN (the operator's), or run in the directory of hookstream dev")
		}
		token = strings.TrimSpace(string(b))
	}
	c, err := adminclient.New(strings.TrimSuffix(s.AdminURL, "/"), token)
	if err != nil {
		return nil, fmt.Errorf("admin API client: %w", err)
	}
	api := &apiSession{c: c, partner: partner, json: output == "json", out: out}
	if api.partner == "" {
		if api.partner, err = api.onlyPartner(ctx); err != nil {
			return nil, err
		}
	}
	return api, nil
}

// onlyPartner is the partner of a partner API key, or the operator's only partner.
func (a *apiSession) onlyPartner(ctx context.Context) (string, error) {
	limits, err := a.c.GetLimitsWithResponse(ctx, nil)
	if err := adminclient.Check(limits, err); err != nil {
		return "", err
	}
	if p := limits.JSON200.PartnerID; p != nil {
		return *p, nil // a partner key
	}
	list, err := a.c.ListPartnersWithResponse(ctx, &adminclient.ListPartnersParams{Limit: ptr(6)})
	if err := adminclient.Check(list, err); err != nil {
		return "", err
	}
	var ids []string
	for _, p := range list.JSON200.Data {
		ids = append(ids, p.ID)
	}
	return onlyPartner(ids)
}

// onlyPartner is the deployment's only partner, given the first six of its partners' ids (the
// six show whether there are more than five to list); otherwise it says why there is none to
// pick.
func onlyPartner(ids []string) (string, error) {
	switch {
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) == 0:
		return "", errors.New("the deployment has no partner yet (POST /v1/partners creates one)")
	case len(ids) > 5:
		ids = append(ids[:5], "…")
	}
	return "", fmt.Errorf("the deployment has several partners (%s): name one with --partner", strings.Join(ids, ", "))
}

// show prints res: its JSON body as answered, or table(w) written through a tabwriter. The
// table's partner-written values are escaped by printable where they are written; the whole
// table is escaped again but for its layout, so a value no one thought of cannot reach the
// terminal raw either (terminal.go).
func (a *apiSession) show(res adminclient.Response, err error, table func(w io.Writer)) error {
	if err := adminclient.Check(res, err); err != nil {
		return err
	}
	if a.json {
		return printJSON(a.out, res.GetBody())
	}
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	table(w)
	if err := w.Flush(); err != nil {
		return err
	}
	_, err = io.WriteString(a.out, printableText(b.String()))
	return err
}

func printJSON(out io.Writer, body []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return fmt.Errorf("the admin API answered no JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := out.Write(printableJSON(b.Bytes()))
	return err
}

var endpointSubcommands = []apiSubcommand{
	{"list", nil, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		limit := fs.Int("limit", 100, "most endpoints shown, 1 to 1000")
		cursor := fs.String("cursor", "", "the next page: the cursor a previous list printed")
		return func(ctx context.Context, a *apiSession, _ []string) error {
			params := &adminclient.ListEndpointsParams{Limit: limit}
			if *cursor != "" {
				params.Cursor = cursor
			}
			res, err := a.c.ListEndpointsWithResponse(ctx, a.partner, params)
			return a.show(res, err, func(w io.Writer) {
				fmt.Fprintln(w, "ID\tSTATUS\tURL\tEVENT TYPES\tFAILING SINCE")
				for _, ep := range res.JSON200.Data {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", ep.ID, ep.Status, printable(ep.URL), printable(strings.Join(ep.EventTypes, ",")), timeOrDash(ep.FailingSince))
				}
				if res.JSON200.HasMore {
					fmt.Fprintf(w, "more: --cursor %s\n", res.JSON200.NextCursor)
				}
			})
		}
	}},
	{"create", nil, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		url := fs.String("url", "", "the receiver's URL (HTTPS unless the deployment allows plain HTTP)")
		var events []string
		fs.Var((*listValue)(&events), "events", "comma-separated event types it receives: exact, prefix.* or *")
		description := fs.String("description", "", "what it is for")
		maxInFlight := fs.Int("max-in-flight", 0, "most requests to it at once; 0: the API's default")
		ordered := fs.Bool("ordered", false, "one request at a time, in order (ordering bounded)")
		ordering := fs.String("ordering", "", "none, bounded (--ordered) or strict: a failing event holds the later ones until it is delivered or dead-lettered")
		filter := fs.String("filter", "", `a payload filter, e.g. 'data.amount.value >= 100' (docs/fanout-and-recorder.md: Payload filters)`)
		policy := fs.String("retry-policy", "", `a retry policy as JSON, e.g. '{"event_types":{"balance.*":{"attempts":15}}}'`)
		scheme := fs.String("signature-scheme", "", "v1 (HMAC, a shared whsec_ secret; the API's default) or v1a (ed25519: receivers verify with a whpk_ public key)")
		return func(ctx context.Context, a *apiSession, _ []string) error {
			if *url == "" || len(events) == 0 {
				return errors.New("want --url and --events")
			}
			body := adminclient.EndpointCreate{URL: *url, EventTypes: events, Ordered: ordered}
			if *scheme != "" {
				body.SignatureScheme = (*adminclient.EndpointCreateSignatureScheme)(scheme)
			}
			if *ordering != "" {
				o := adminclient.EndpointCreateOrdering(*ordering)
				if !o.Valid() {
					return fmt.Errorf("--ordering %q: want none, bounded or strict", *ordering)
				}
				body.Ordering = &o
				if !*ordered {
					body.Ordered = nil // ordering decides
				}
			}
			if *filter != "" {
				body.Filter = filter
			}
			if *policy != "" {
				body.RetryPolicy = new(adminclient.RetryPolicy)
				dec := json.NewDecoder(strings.NewReader(*policy))
				dec.DisallowUnknownFields()
				if err := dec.Decode(body.RetryPolicy); err != nil {
					return fmt.Errorf("--retry-policy is not a retry policy: %w", err)
				}
			}
			if *description != "" {
				body.Description = description
			}
			if *maxInFlight != 0 {
				body.MaxInFlight = maxInFlight
			}
			res, err := a.c.CreateEndpointWithResponse(ctx, a.partner, body)
			return a.show(res, err, func(w io.Writer) {
				var ep adminclient.Endpoint // the created endpoint is an endpoint and its secret
				_ = json.Unmarshal(res.Body, &ep)
				printEndpoint(w, ep)
				if res.JSON201.Secret != "" {
					fmt.Fprintf(w, "secret\t%s\t(shown only now)\n", res.JSON201.Secret)
				}
			})
		}
	}},
	{"get", []string{"<endpoint-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		return func(ctx context.Context, a *apiSession, args []string) error {
			res, err := a.c.GetEndpointWithResponse(ctx, a.partner, args[0])
			return a.show(res, err, func(w io.Writer) { printEndpoint(w, *res.JSON200) })
		}
	}},
	{"disable", []string{"<endpoint-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		reason := fs.String("reason", "disabled with hookstream endpoints disable", "why, for the endpoint.disabled event and the endpoint")
		return func(ctx context.Context, a *apiSession, args []string) error {
			res, err := a.c.DisableEndpointWithResponse(ctx, a.partner, args[0], adminclient.Disable{Reason: *reason})
			return a.show(res, err, func(w io.Writer) { printEndpoint(w, *res.JSON200) })
		}
	}},
	{"enable", []string{"<endpoint-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		return func(ctx context.Context, a *apiSession, args []string) error {
			res, err := a.c.EnableEndpointWithResponse(ctx, a.partner, args[0], adminclient.Empty{})
			return a.show(res, err, func(w io.Writer) { printEndpoint(w, *res.JSON200) })
		}
	}},
	{"rotate", []string{"<endpoint-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		var overlap time.Duration
		fs.Var((*durationValue)(&overlap), "overlap", "how long the current secrets keep signing beside the new one; 0: the API's default (24h)")
		return func(ctx context.Context, a *apiSession, args []string) error {
			var body adminclient.RotateRequest
			if overlap > 0 {
				body.OverlapSeconds = ptr(int(overlap / time.Second))
			}
			res, err := a.c.RotateSecretWithResponse(ctx, a.partner, args[0], body)
			return a.show(res, err, func(w io.Writer) {
				r := res.JSON200
				fmt.Fprintf(w, "endpoint\t%s\n", r.Endpoint.ID)
				if r.PublicKey != nil {
					fmt.Fprintf(w, "public key\t%s\t(v1a; the signing key is never shown)\n", *r.PublicKey)
				} else {
					fmt.Fprintf(w, "secret\t%s\t(shown only now)\n", r.Secret)
				}
				fmt.Fprintf(w, "previous secrets sign until\t%s\n", timeOrDash(r.PreviousSecretsExpireAt))
			})
		}
	}},
	{"test", []string{"<endpoint-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		return func(ctx context.Context, a *apiSession, args []string) error {
			res, err := a.c.SendTestEventWithResponse(ctx, a.partner, args[0], adminclient.Empty{})
			return a.show(res, err, func(w io.Writer) {
				t := res.JSON202
				fmt.Fprintf(w, "event\t%s\ndelivery\t%s\nattempt\t%d\n", t.EventID, t.DeliveryID, t.AttemptNo)
			})
		}
	}},
}

var deliverySubcommands = []apiSubcommand{
	{"list", []string{"<endpoint-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		state := fs.String("state", "", "only these: pending, retrying, succeeded, failed or skipped")
		since := fs.String("since", "", "created at or after (RFC 3339, or a duration ago such as 1h)")
		until := fs.String("until", "", "created before (RFC 3339, or a duration ago)")
		types := fs.String("type", "", "comma-separated event types or prefix wildcards")
		limit := fs.Int("limit", 50, "most deliveries shown, 1 to 1000")
		cursor := fs.String("cursor", "", "the next page: the cursor a previous list printed")
		return func(ctx context.Context, a *apiSession, args []string) error {
			params := &adminclient.ListDeliveriesParams{Limit: limit}
			if *state != "" {
				params.State = (*adminclient.ListDeliveriesParamsState)(state)
			}
			for flagName, v := range map[string]struct {
				text string
				into **time.Time
			}{"since": {*since, &params.Since}, "until": {*until, &params.Until}} {
				if v.text == "" {
					continue
				}
				t, err := parseMoment(v.text, time.Now())
				if err != nil {
					return fmt.Errorf("--%s: %w", flagName, err)
				}
				*v.into = &t
			}
			if *types != "" {
				params.Type = types
			}
			if *cursor != "" {
				params.Cursor = cursor
			}
			res, err := a.c.ListDeliveriesWithResponse(ctx, a.partner, args[0], params)
			return a.show(res, err, func(w io.Writer) {
				fmt.Fprintln(w, "DELIVERY\tEVENT\tTYPE\tSTATE\tATTEMPTS\tLAST STATUS\tUPDATED")
				for _, d := range res.JSON200.Data {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.DeliveryID, d.EventID, printable(d.EventType), d.State, d.AttemptCount,
						lastStatus(d.LastStatus, d.LastErrorCategory), d.UpdatedAt.UTC().Format(time.RFC3339))
				}
				if res.JSON200.HasMore {
					fmt.Fprintf(w, "more: --cursor %s\n", res.JSON200.NextCursor)
				}
			})
		}
	}},
	{"get", []string{"<delivery-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		return func(ctx context.Context, a *apiSession, args []string) error {
			res, err := a.c.GetDeliveryWithResponse(ctx, a.partner, args[0])
			return a.show(res, err, func(w io.Writer) {
				d := res.JSON200
				fmt.Fprintf(w, "delivery\t%s\nevent\t%s\t%s\nendpoint\t%s\nstate\t%s\nnext attempt\t%s\n\n",
					d.DeliveryID, d.EventID, printable(d.EventType), d.EndpointID, d.State, timeOrDash(d.NextAttemptAt))
				fmt.Fprintln(w, "ATTEMPT\tTRIGGER\tSTARTED\tSTATUS\tLATENCY")
				for _, at := range d.Attempts {
					fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", at.AttemptNo, at.Trigger, at.StartedAt.UTC().Format(time.RFC3339),
						lastStatus(at.Status, at.ErrorCategory), console.FormatLatency(at.LatencyUs, at.LatencyMs))
				}
			})
		}
	}},
	{"replay", []string{"<delivery-id>"}, func(fs *commandFlags) func(context.Context, *apiSession, []string) error {
		return func(ctx context.Context, a *apiSession, args []string) error {
			res, err := a.c.ReplayDeliveryWithResponse(ctx, a.partner, args[0], adminclient.Empty{})
			return a.show(res, err, func(w io.Writer) {
				r := res.JSON202
				fmt.Fprintf(w, "delivery\t%s\nevent\t%s\nattempt\t%d\t(%s)\n", r.DeliveryID, r.EventID, r.AttemptNo, r.Trigger)
			})
		}
	}},
}

func printEndpoint(w io.Writer, ep adminclient.Endpoint) {
	var secrets []string
	for _, s := range ep.Secrets {
		text := s.ID
		if s.PublicKey != nil {
			text += " " + *s.PublicKey
		}
		if s.ExpiresAt != nil {
			text += " (until " + s.ExpiresAt.UTC().Format(time.RFC3339) + ")"
		}
		secrets = append(secrets, text)
	}
	reason := "-"
	if ep.DisabledReason != nil {
		reason = *ep.DisabledReason
	}
	fmt.Fprintf(w, "id\t%s\npartner\t%s\nurl\t%s\nstatus\t%s\ndisabled reason\t%s\nevent types\t%s\n", ep.ID, ep.PartnerID, printable(ep.URL),
		ep.Status, printable(reason), printable(strings.Join(ep.EventTypes, ",")))
	fmt.Fprintf(w, "description\t%s\nmax in flight\t%d\nordering\t%s\nfailing since\t%s\nsignature\t%s\nsecrets\t%s\ncreated\t%s\n",
		printable(ep.Description), ep.MaxInFlight, ep.Ordering, timeOrDash(ep.FailingSince), ep.SignatureScheme, strings.Join(secrets, ", "),
		ep.CreatedAt.UTC().Format(time.RFC3339))
	if o := ep.Health.Order; o != nil {
		fmt.Fprintf(w, "held behind the head\t%d\nhead held since\t%s\n", o.Held, timeOrDash(o.HeadSince))
	}
	if ep.Filter != nil {
		fmt.Fprintf(w, "filter\t%s\n", printable(*ep.Filter))
	}
	if ep.RetryPolicy != nil {
		p, _ := json.Marshal(ep.RetryPolicy)
		fmt.Fprintf(w, "retry policy\t%s\n", printable(string(p)))
	}
}

// lastStatus is an attempt's answer: its HTTP status, or the category of its failure.
func lastStatus(status *int, category *string) string {
	switch {
	case status != nil && *status != 0:
		return strconv.Itoa(*status)
	case category != nil && *category != "":
		return *category
	}
	return "-"
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func ptr[T any](v T) *T { return &v }
