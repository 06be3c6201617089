package fanout_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// startFanoutProcess runs `hookstream fanout` as a child process.
func startFanoutProcess(t *testing.T, e *env) (kill func()) {
	t.Helper()
	return testenv.StartProcess(t, "fanout",
		"--kafka-brokers", strings.Join(e.Kafka.Brokers, ","),
		"--topic-prefix", e.Kafka.Prefix,
		"--instance-id", "fanout-under-test",
		"--metrics-addr", "",
		"--log-format", "text").Kill
}

// R11: SIGKILL fanout at random moments during a stream; once it catches up, the committed
// deliveries hold exactly one record per (event, endpoint) pair that should exist. cdc fans
// out the events that at most two endpoints receive and fanout the others (p2's usage events
// reach three), so fanout is killed while it passes events by as well as while it fans out.
func TestFanoutKillNine(t *testing.T) {
	t.Parallel()
	e := testenv.NewEnv(t)
	startCDC(t, e, fanoutBy{"mixed", 2})
	type ep struct {
		id, partner string
		types       []string
	}
	eps := []ep{
		{"ep_0a", "p0", []string{"*"}}, {"ep_0b", "p0", []string{"customer.*"}},
		{"ep_1a", "p1", []string{"api_key.*"}}, {"ep_1b", "p1", []string{"customer.created", "api_key.status_changed"}},
		{"ep_2a", "p2", []string{"*"}}, {"ep_2b", "p2", []string{"*"}}, {"ep_2c", "p2", []string{"usage.*"}},
		{"ep_3a", "p3", []string{"customer.*"}},
	}
	sqlExec(t, e, `INSERT INTO partner (id) VALUES ('p0'), ('p1'), ('p2'), ('p3')`)
	for _, x := range eps {
		sqlExec(t, e, `INSERT INTO endpoint (id, partner_id, url, event_types) VALUES ($1, $2, 'https://x.example', $3)`, x.id, x.partner, x.types)
	}
	types := []string{"customer.created", "customer.deleted", "api_key.status_changed", "api_key.created", "usage.finalized"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	wrng := rand.New(rand.NewPCG(rng.Uint64(), 2))

	want := map[string]int{}
	var mu sync.Mutex
	var written int
	const total = 1500
	werr := make(chan error, 1)
	go func() {
		for i := 0; i < total; i++ {
			p := fmt.Sprintf("p%d", wrng.IntN(4))
			typ := types[wrng.IntN(len(types))]
			id := appendEvent(t, e, p, typ)
			mu.Lock()
			for _, x := range eps {
				if x.partner == p && endpoints.Subscribed(x.types, typ) {
					want[pair(id, x.id)] = 1
				}
			}
			written++
			mu.Unlock()
			time.Sleep(time.Duration(wrng.IntN(3)) * time.Millisecond)
		}
		werr <- nil
	}()

	kill := startFanoutProcess(t, e)
	kills, writing := 0, true
	for writing || kills < 3 {
		select {
		case <-werr:
			writing = false
		case <-time.After(time.Duration(500+rng.IntN(1500)) * time.Millisecond):
			kill()
			kills++
			kill = startFanoutProcess(t, e)
		}
	}
	mu.Lock()
	t.Logf("%d events, %d expected deliveries, fanout killed %d times", written, len(want), kills)
	mu.Unlock()

	got := pairs(decodeDeliveries(t, consume(t, e, e.Names.Deliveries, len(want), 3*time.Second)))
	dups, missing, extra := 0, 0, 0
	for k, n := range got {
		if n > 1 {
			dups++
		}
		if want[k] == 0 {
			extra++
		}
	}
	for k := range want {
		if got[k] == 0 {
			missing++
		}
	}
	if dups+missing+extra > 0 {
		t.Fatalf("%d pairs delivered more than once, %d missing, %d that should not exist", dups, missing, extra)
	}
}
