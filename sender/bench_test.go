package sender_test

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/sender"
	"github.com/hookstream/hookstream/webhook"
)

// BenchmarkIsolation measures what R21 promises: the delivery latency of healthy endpoints
// (from producing the delivery record to the receiver getting the request) with and without
// a dead endpoint, one that hangs past the request timeout, on the same partition. Every
// record goes to one partition, paced at about 1000 records/s; in the second run every fifth
// record is for the dead endpoint. Run with a fixed count, e.g. -benchtime=3000x.
func BenchmarkIsolation(b *testing.B) {
	for _, dead := range []bool{false, true} {
		name := "healthy_only"
		if dead {
			name = "with_hanging_endpoint"
		}
		b.Run(name, func(b *testing.B) { benchIsolation(b, dead) })
	}
}

func benchIsolation(b *testing.B, dead bool) {
	e := newEnv(b)
	var (
		mu       sync.Mutex
		produced = map[string]time.Time{}
		latency  []time.Duration
	)
	var healthy []string
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("ep_ok%02d", i)
		healthy = append(healthy, id)
		e.endpoint(id, "p_a")
		e.rcv.handle(id, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			at := time.Now()
			mu.Lock()
			if t0, ok := produced[r.Header.Get("webhook-id")]; ok {
				latency = append(latency, at.Sub(t0))
				delete(produced, r.Header.Get("webhook-id"))
			}
			mu.Unlock()
		})
	}
	e.endpoint("ep_dead", "p_a")
	e.rcv.handle("ep_dead", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select { // hangs past the request timeout
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	cfg := e.config()
	cfg.Egress.RequestTimeout = 2 * time.Second
	cfg.ShutdownGrace = 3 * time.Second
	e.start(cfg)

	// Warm up: one delivery per endpoint opens the connections.
	var warm []records.Delivery
	for _, id := range healthy {
		warm = append(warm, delivery("p_a", id, "customer.created"))
	}
	e.deliver(0, warm...)
	waitFor(b, 30*time.Second, "warm-up", func() bool { return e.rcv.total() == len(healthy) })
	mu.Lock()
	latency = nil
	mu.Unlock()

	const batch, every = 10, 10 * time.Millisecond
	b.ResetTimer()
	start := time.Now()
	next := start
	for sent := 0; sent < b.N; {
		var ds []records.Delivery
		for i := 0; i < batch && sent < b.N; i++ {
			if dead && sent%5 == 4 {
				ds = append(ds, delivery("p_a", "ep_dead", "customer.created"))
			} else {
				ds = append(ds, delivery("p_a", healthy[sent%len(healthy)], "customer.created"))
			}
			sent++
		}
		mu.Lock()
		now := time.Now()
		for _, d := range ds {
			if d.EndpointID != "ep_dead" {
				produced[d.EventID] = now
			}
		}
		mu.Unlock()
		e.deliver(0, ds...)
		next = next.Add(every)
		time.Sleep(time.Until(next))
	}
	want := b.N
	if dead {
		want = b.N - b.N/5
	}
	waitFor(b, 5*time.Minute, "every healthy delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(latency) >= want
	})
	elapsed := time.Since(start)
	b.StopTimer()

	mu.Lock()
	defer mu.Unlock()
	slices.Sort(latency)
	pct := func(p float64) float64 {
		return float64(latency[int(p*float64(len(latency)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(latency))/elapsed.Seconds(), "healthy-deliveries/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkThroughput compares the sender's delivery rate with a bare net/http loop making the
// same signed POSTs with the same concurrency, to a local HTTP and a local HTTPS receiver
// (`make bench-sender`; the aim is at least 80 % of the bare rate). Rates run from the
// first request to the last, as the receivers see them, with b.N records produced before the
// sender starts; every attempt record is then checked to be there. Eight endpoints, each
// its own receiver, with max_in_flight 8; the bare loop runs 8 workers for each of them.
// Run with a fixed count, e.g. -benchtime=5000x.
func BenchmarkThroughput(b *testing.B) {
	for _, scheme := range []string{"http", "https"} {
		b.Run(scheme+"/sender", func(b *testing.B) { benchSender(b, scheme == "https") })
		b.Run(scheme+"/bare_loop", func(b *testing.B) { benchBare(b, scheme == "https") })
	}
}

const (
	benchEndpoints   = 8
	benchMaxInFlight = 8
)

// countingServers starts one receiver per endpoint (each its own host:port, as real endpoints
// are, so connection pools work per endpoint) answering 204 and counting requests, and the
// timestamps of the first and the last request.
type counting struct {
	srvs  []*httptest.Server
	n     atomic.Int64
	mu    sync.Mutex
	first time.Time
	last  time.Time
}

func countingServers(b *testing.B, tlsOn bool) *counting {
	c := &counting{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c.n.Add(1)
		now := time.Now()
		c.mu.Lock()
		if c.first.IsZero() {
			c.first = now
		}
		c.last = now
		c.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	for i := 0; i < benchEndpoints; i++ {
		srv := httptest.NewUnstartedServer(h)
		if tlsOn {
			srv.EnableHTTP2 = true
			srv.StartTLS()
		} else {
			srv.Start()
		}
		b.Cleanup(srv.Close)
		c.srvs = append(c.srvs, srv)
	}
	return c
}

// rate is the delivery rate from the first request to the last one.
func (c *counting) rate(n int) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(n) / c.last.Sub(c.first).Seconds()
}

// benchSettle is the pause before each measured run of BenchmarkThroughput, sender or bare
// loop alike, so that neither starts while the broker is still deleting the topics of the
// previous sender run (on a real broker that work slowed the bare loop that came next).
const benchSettle = 3 * time.Second

func benchSender(b *testing.B, tlsOn bool) {
	e := newQuietEnv(b)
	c := countingServers(b, tlsOn)
	var ds []records.Delivery
	ports := []int{e.rcv.port}
	for i := 0; i < benchEndpoints; i++ {
		id := fmt.Sprintf("ep_%d", i)
		e.endpoint(id, "p_a", func(ep *records.Endpoint) {
			ep.URL = c.srvs[i].URL + "/" + id
			ep.MaxInFlight = benchMaxInFlight
		})
		ports = append(ports, portOf(b, c.srvs[i].URL))
	}
	for i := 0; i < b.N; i++ {
		ds = append(ds, delivery("p_a", fmt.Sprintf("ep_%d", i%benchEndpoints), "customer.created"))
	}
	for i := 0; i < len(ds); i += 500 {
		e.deliver(int32(i/500%3), ds[i:min(i+500, len(ds))]...)
	}
	cfg := e.config()
	cfg.QueueSize = cfg.MaxBuffered // a backlog, not a slow endpoint: nothing should be deferred
	cfg.Egress.AllowedPorts = ports
	if tlsOn {
		cfg.Egress.RootCAs = x509.NewCertPool()
		cfg.Egress.RootCAs.AddCert(c.srvs[0].Certificate())
	}
	time.Sleep(benchSettle)
	b.ResetTimer()
	cpu := processCPU()
	e.start(cfg)
	waitFor(b, 5*time.Minute, "every delivery", func() bool { return c.n.Load() >= int64(b.N) })
	cpu = processCPU() - cpu
	b.StopTimer()
	// Then every delivery must have its attempt record; reading them waits until now so that
	// the test's reader does not compete with the sender for the CPU.
	e.attempts = readAttempts(b, e)
	waitFor(b, 5*time.Minute, "every attempt record", func() bool {
		return e.attempts.deliveredCount() >= b.N
	})
	b.ReportMetric(c.rate(b.N), "deliveries/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/delivery")
	b.ReportMetric(0, "ns/op")
}

// processCPU is the CPU time the process has used, user and system. The benchmarks report it
// per delivery beside the rate: on a shared machine it is the steadier figure of the two.
// It counts everything in the process: the receivers, and the embedded Kafka cluster if any.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchBare(b *testing.B, tlsOn bool) {
	c := countingServers(b, tlsOn)
	tr := c.srvs[0].Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = benchMaxInFlight
	client := &http.Client{Transport: tr}
	secret, _ := webhook.NewSecret()
	signer, _ := webhook.NewSigner(secret)
	body := delivery("p_a", "ep_0", "customer.created").Body
	// Each endpoint has its own queue and benchMaxInFlight workers, as a sender lane has: a
	// shared queue would now and then put a ninth request on one host and churn connections.
	jobs := make([]chan int, benchEndpoints)
	var wg sync.WaitGroup
	time.Sleep(benchSettle)
	b.ResetTimer()
	cpu := processCPU()
	for ep := range jobs {
		jobs[ep] = make(chan int, benchMaxInFlight)
		target := fmt.Sprintf("%s/ep_%d", c.srvs[ep].URL, ep)
		for w := 0; w < benchMaxInFlight; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs[ep] {
					req, _ := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("User-Agent", sender.DefaultUserAgent)
					signer.SetHeaders(req.Header, "evt_"+strconv.Itoa(i), time.Now(), body)
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						continue
					}
					_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
					resp.Body.Close()
				}
			}()
		}
	}
	for i := 0; i < b.N; i++ {
		jobs[i%benchEndpoints] <- i
	}
	for _, ch := range jobs {
		close(ch)
	}
	wg.Wait()
	cpu = processCPU() - cpu
	b.StopTimer()
	if c.n.Load() != int64(b.N) {
		b.Fatalf("receivers got %d of %d", c.n.Load(), b.N)
	}
	b.ReportMetric(c.rate(b.N), "deliveries/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/delivery")
	b.ReportMetric(0, "ns/op")
}

func portOf(b testing.TB, rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}
