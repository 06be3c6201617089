package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// shutdownBound is how soon a component must exit after SIGTERM with its work finished or
// handed off and its offsets committed (docs/operations.md; design.md section 12): the
// sender's request grace (20 s) bounds the slowest, the others take a few seconds.
const shutdownBound = 30 * time.Second

// R11, R13: a sender, fanout, retry or recorder process stopped with SIGTERM while records keep
// coming stops taking them, finishes what it took, commits and exits 0 within shutdownBound; its
// successor (same instance id) goes on, and every record fed is processed exactly once: one
// request per delivery for the sender (no request finished and left uncommitted), one delivery
// record per event for fanout and retry (their Kafka transactions), one history row per
// attempt for the recorder.
func TestSIGTERMFinishesAndCommits(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sender", "fanout", "retry", "recorder"} {
		t.Run(kind, func(t *testing.T) {
			m := newMemberEnv(t, kind)
			m.delay.Store(int64(200 * time.Millisecond)) // the sender's requests take a while: about ten are in flight at the SIGTERM
			args := append(m.args, "--instance-id", kind+"-0")
			p := testenv.StartProcess(t, args...)
			ids := m.feed(t)
			m.waitProcessed(t, ids, time.Minute)

			// A steady stream of records until the successor has taken over.
			var mu sync.Mutex
			stop, fed := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(fed)
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					more := m.feed(t)
					mu.Lock()
					ids = append(ids, more...)
					mu.Unlock()
				}
			}()
			time.Sleep(3 * time.Second)
			took, err := p.Terminate(shutdownBound)
			if err != nil {
				close(stop)
				<-fed
				t.Fatalf("%s: %v", kind, err)
			}
			mu.Lock()
			atStop := slices.Clone(ids) // the feeder goes on appending to ids
			mu.Unlock()
			fedAtStop := len(atStop)
			processed := fedAtStop - m.missing(t, atStop)
			testenv.StartProcess(t, args...)
			time.Sleep(2 * time.Second)
			close(stop)
			<-fed
			m.waitProcessed(t, ids, 2*time.Minute)
			time.Sleep(3 * time.Second) // a record processed twice would show by now
			t.Logf("%s lane: %s exited %s after SIGTERM, %d of %d records fed by then processed; %d records in all",
				m.k.Lane, kind, took.Round(10*time.Millisecond), processed, fedAtStop, len(ids))
			if twice := m.twice(ids); len(twice) > 0 {
				t.Fatalf("%s: %d records processed more than once across the SIGTERM, e.g. %s", kind, len(twice), twice[0])
			}
		})
	}
}

// twice lists the ids processed more than once: for the recorder, delivery ids with more than
// one attempt row.
func (m *memberEnv) twice(ids []string) []string {
	var out []string
	if m.kind == "recorder" {
		rows, err := m.db.Pool.Query(context.Background(), `SELECT delivery_id, count(*) FROM delivery_attempt
			WHERE delivery_id = ANY($1) GROUP BY 1 HAVING count(*) > 1`, ids)
		if err != nil {
			return []string{err.Error()}
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				return []string{err.Error()}
			}
			out = append(out, fmt.Sprintf("%s (%d rows)", id, n))
		}
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if n := m.seen[id]; n > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", id, n))
		}
	}
	return out
}

// R35: the admin API stopped with SIGTERM while operators keep creating partners stops taking
// requests (new connections are refused), answers every request it took, and exits 0 within
// shutdownBound: no request is answered 5xx or cut off, and every partner it answered 201 for
// exists.
func TestAdminSIGTERMAnswersWhatItTook(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	k := testenv.NewKafka(t)
	k.CreateTopics(t)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	token := harness.NewAdminToken()
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProcess(t, "admin", "--database-url", db.URL, "--kafka-brokers", strings.Join(k.Brokers, ","),
		"--topic-prefix", k.Prefix, "--admin-addr", addr, "--admin-token", token, "--secret-key", key, "--log-format", "text")
	admin := harness.NewAdminClient("http://"+addr, token)
	deadline := time.Now().Add(time.Minute)
	for admin.Call(context.Background(), "GET", "/v1/event-types", nil, http.StatusOK, nil) != nil {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("admin not answering:\n%s", p.LogTail())
		}
		time.Sleep(100 * time.Millisecond)
	}

	var (
		mu         sync.Mutex
		created    []string
		refused    atomic.Int64 // requests the stopping server did not take
		answered   []string     // anything else: an answer other than 201, or a request cut off
		unanswered []string     // requests that met a connection closed under them (EOF)
		wg         sync.WaitGroup
		stop       atomic.Bool
	)
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				id := fmt.Sprintf("p%d_%d", c, n)
				err := admin.CreatePartner(context.Background(), id)
				mu.Lock()
				switch {
				case err == nil:
					created = append(created, id)
				case notTaken(err):
					refused.Add(1)
					time.Sleep(20 * time.Millisecond) // the server is gone: no need to spin
				case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
					// A kept-alive connection the server closed as the request went out on it
					// (HTTP/1.1's own race, RFC 9112 section 9.3.1): not taken only if nothing
					// was done for it, which the database says below.
					unanswered = append(unanswered, id)
				default:
					answered = append(answered, fmt.Sprintf("%s: %v", id, err))
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	took, err := p.Terminate(shutdownBound)
	time.Sleep(500 * time.Millisecond) // requests keep coming after the exit: refused
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("admin exited %s after SIGTERM; %d partners created, %d requests refused after", took.Round(10*time.Millisecond), len(created), refused.Load())
	if len(answered) > 0 {
		t.Fatalf("%d requests answered other than 201 or cut off, e.g. %s", len(answered), answered[0])
	}
	if len(created) == 0 || refused.Load() == 0 {
		t.Fatalf("%d created, %d refused: the load did not span the shutdown", len(created), refused.Load())
	}
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM partner WHERE id = ANY($1)`, created).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(created) {
		t.Fatalf("%d of the %d partners answered 201 exist", n, len(created))
	}
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM partner WHERE id = ANY($1)`, unanswered).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d of the %d requests whose connection closed under them were carried out, unanswered", n, len(unanswered))
	}
}

// notTaken says whether a request failed because no server took it: the connection was refused,
// or a kept-alive connection was closed by the stopping server before it read the request.
func notTaken(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		(errors.As(err, &op) && op.Op == "dial") || strings.Contains(err.Error(), "server closed idle connection")
}
