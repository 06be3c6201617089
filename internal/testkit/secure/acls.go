package secure

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hookstream/hookstream/internal/topics"
)

// The SCRAM users of the secured node (deploy/kafka/kafka.sh secure): the super user, the
// setup principal that creates the topics, and one per component.
const (
	Super    = "admin"
	Setup    = "hookstream-setup"
	CDC      = "hookstream-cdc"
	Fanout   = "hookstream-fanout"
	Sender   = "hookstream-sender"
	Retry    = "hookstream-retry"
	Recorder = "hookstream-recorder"
	Admin    = "hookstream-admin"
)

// Components are the users of the components, each with its ACLs.
var Components = []string{CDC, Fanout, Sender, Retry, Recorder, Admin}

// Grant is one ACL: user may do ops on the resources of kind named name (or, Prefixed, every
// one whose name starts with it).
type Grant struct {
	User     string
	Kind     string // "topic", "group", "transactional-id" or "cluster"
	Name     string
	Prefixed bool
	Ops      []kadm.ACLOperation
}

// The operations granted; Kafka's Read and Write imply Describe.
var (
	read      = []kadm.ACLOperation{kadm.OpRead}
	write     = []kadm.ACLOperation{kadm.OpWrite}
	readWrite = []kadm.ACLOperation{kadm.OpRead, kadm.OpWrite}
)

// ACLs are the grants every component needs under the topic prefix p, and no more: the table of
// docs/operations.md ("Connecting to a secured Kafka"), and those of the setup principal that
// runs `hookstream topics create`.
func ACLs(p string) []Grant {
	n := topics.For(p)
	topic := func(user, name string, prefixed bool, ops []kadm.ACLOperation) Grant {
		return Grant{User: user, Kind: "topic", Name: name, Prefixed: prefixed, Ops: ops}
	}
	return []Grant{
		// setup: `hookstream topics create` (and describe), once per installation.
		topic(Setup, p+".", true, []kadm.ACLOperation{kadm.OpCreate, kadm.OpDescribe, kadm.OpDescribeConfigs}),

		// cdc publishes the outbox in transactions, with the deliveries of the events it fans
		// out itself, and reads its checkpoint and endpoint table back at start.
		topic(CDC, n.Events, false, write),
		topic(CDC, n.Deliveries, false, write),
		topic(CDC, n.DLQ, false, write),
		topic(CDC, n.Endpoints, false, readWrite),
		topic(CDC, n.Checkpoints, false, readWrite),
		{User: CDC, Kind: "transactional-id", Name: p + ".cdc.", Prefixed: true, Ops: write},

		// fanout: events → deliveries in transactions with its group's offsets.
		topic(Fanout, n.Events, false, read),
		topic(Fanout, n.Endpoints, false, read),
		topic(Fanout, n.Deliveries, false, write),
		topic(Fanout, n.DLQ, false, write),
		{User: Fanout, Kind: "group", Name: p + ".fanout", Ops: read},
		{User: Fanout, Kind: "transactional-id", Name: p + ".fanout.", Prefixed: true, Ops: write},
		// Its hanging-transaction repairer (internal/kafkatxn) describes the producers of every
		// topic of the installation, the transactions it finds, and writes their markers.
		topic(Fanout, p+".", true, read),
		{User: Fanout, Kind: "transactional-id", Name: p + ".", Prefixed: true, Ops: []kadm.ACLOperation{kadm.OpDescribe}},
		{User: Fanout, Kind: "cluster", Ops: []kadm.ACLOperation{kadm.OpClusterAction}},

		// sender: deliveries → attempts, retries scheduled in the tiers, dead letters.
		topic(Sender, n.Deliveries, false, read),
		topic(Sender, n.Endpoints, false, read),
		topic(Sender, n.Attempts, false, write),
		topic(Sender, n.DLQ, false, write),
		topic(Sender, p+".retry.", true, write),
		{User: Sender, Kind: "group", Name: p + ".sender", Ops: read},

		// retry: each tier's group and transactional id are named after its topic.
		topic(Retry, p+".retry.", true, readWrite),
		topic(Retry, n.Deliveries, false, write),
		topic(Retry, n.DLQ, false, write),
		{User: Retry, Kind: "group", Name: p + ".retry.", Prefixed: true, Ops: read},
		{User: Retry, Kind: "transactional-id", Name: p + ".retry.", Prefixed: true, Ops: write},

		// recorder: attempts and pending deliveries → PostgreSQL.
		topic(Recorder, n.Attempts, false, read),
		topic(Recorder, n.Deliveries, false, read),
		{User: Recorder, Kind: "group", Name: p + ".recorder", Ops: read},
		{User: Recorder, Kind: "group", Name: p + ".recorder.pending", Ops: read},

		// admin: the feed and event stream read the events topic directly (no group); replays
		// and test events are produced to deliveries.
		topic(Admin, n.Events, false, read),
		topic(Admin, n.Deliveries, false, write),
	}
}

// Apply creates grants with adm (a client of the super user).
func Apply(ctx context.Context, adm *kadm.Client, grants []Grant) error {
	for _, g := range grants {
		b := kadm.NewACLs().Allow(Principal(g.User)).Operations(g.Ops...)
		if g.Prefixed {
			b.ResourcePatternType(kadm.ACLPatternPrefixed)
		} else {
			b.ResourcePatternType(kadm.ACLPatternLiteral)
		}
		switch g.Kind {
		case "topic":
			b.Topics(g.Name)
		case "group":
			b.Groups(g.Name)
		case "transactional-id":
			b.TransactionalIDs(g.Name)
		case "cluster":
			b.Clusters()
		default:
			return fmt.Errorf("secure: grant of %s on a %q", g.User, g.Kind)
		}
		results, err := adm.CreateACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("secure: ACLs of %s on %s %s: %w", g.User, g.Kind, g.Name, err)
		}
		for _, r := range results {
			if r.Err != nil {
				return fmt.Errorf("secure: ACL of %s on %s %s: %w", g.User, g.Kind, g.Name, r.Err)
			}
		}
	}
	return nil
}

// String is the grant as the table of docs/operations.md words it, e.g. "Read prefixed
// hookstream.retry.".
func (g Grant) String() string {
	var ops []string
	for _, o := range g.Ops {
		ops = append(ops, o.String())
	}
	pattern := ""
	if g.Prefixed {
		pattern = "prefixed "
	}
	return fmt.Sprintf("%s: %s on %s %s%s", g.User, strings.Join(ops, ","), g.Kind, pattern, g.Name)
}
