# hookstream — the one entry point for building, running and testing.
#   make dev    the quick start: local PostgreSQL + `hookstream dev` (embedded Kafka, admin on :8080,
#               the reseller reference platform on :8081)
#   make seed   with make dev running: a reseller partner, a webhook/inbox receiver, and verified
#               events of every reseller type
#   make test   everything CI runs: vet, and the whole suite against real PostgreSQL and real Kafka,
#               then the Kafka-dependent packages again against embedded kfake
#
# Beside another PostgreSQL: PG_PORT (54329) is the local cluster's port and PG_DATA its folder
# (.data/pg on 54329, .data/pg-<port> on another), for pg-up, pg-down, dev and the tests; with
# HOOKSTREAM_DATABASE_URL set, `make dev` uses that database and starts no cluster.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO         ?= go
PG_PORT    ?= 54329
PG_DATA    ?=
PG_URL     := postgres://postgres@127.0.0.1:$(PG_PORT)/hookstream?sslmode=disable
# The local cluster's script, with the port and folder chosen here.
PG_SH      := PG_PORT='$(PG_PORT)' PG_DATA='$(PG_DATA)' bash deploy/local/pg.sh
KAFKA_REAL := 127.0.0.1:19092
GOTEST     ?= $(GO) test -race -count=1 -timeout 30m

# Packages whose tests use Kafka (they call testenv.NewKafka); they run on both lanes.
KAFKA_PKGS = $(shell grep -rl --include='*_test.go' 'testenv.NewKafka' . | xargs -r -n1 dirname | sort -u)

.PHONY: all build generate clients dev seed test test-real test-embedded test-fuzz test-rules test-deploy test-cluster test-secure test-datalog test-clients test-chaos chaos vet chromium console-screenshots connect-up connect-down bench bench-cdc bench-fanout bench-sender bench-retry pg-up pg-down kafka-up kafka-down kafka-cluster-up kafka-cluster-down down clean

all: build

# The version `hookstream version` prints: the module's when the build records one, else this
# (the build info has no VCS revision where GOFLAGS holds -buildvcs=false, or in a worktree).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
build:
	$(GO) build -ldflags '-X main.version=$(VERSION)' -o bin/hookstream ./cmd/hookstream

# Regenerates the committed generated code (the admin API client from admin/openapi.json);
# TestGeneratedClientIsCurrent fails until this has been run after a change of the document.
generate:
	$(GO) generate ./...

# Regenerates the committed TypeScript and Python clients of the admin API from admin/openapi.json
# (clients/clients.sh: openapi-typescript and openapi-python-client at the versions pinned in
# clients/, installed from npm and PyPI on the first run); make test-clients fails until this has
# been run after a change of the document.
clients:
	bash clients/clients.sh generate

# deploy/local/dev.sh: HOOKSTREAM_DATABASE_URL when set, else the local cluster (started); it
# execs the binary of make build (HOOKSTREAM_BIN another), so Ctrl-C reaches hookstream dev
# itself, which stops cleanly and exits 0 (under `go run` the status would be go's 1).
dev: build
	PG_PORT='$(PG_PORT)' PG_DATA='$(PG_DATA)' GO='$(GO)' HOOKSTREAM_BIN="$${HOOKSTREAM_BIN:-bin/hookstream}" bash deploy/local/dev.sh

seed: build
	bin/hookstream seed

vet:
	$(GO) vet ./...

test: pg-up kafka-up chromium vet test-rules test-deploy test-real test-embedded test-fuzz test-cluster test-secure test-datalog test-clients test-chaos

test-real: pg-up kafka-up chromium
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' HOOKSTREAM_TEST_KAFKA='$(KAFKA_REAL)' $(GOTEST) ./...

# Short fuzzing runs in every CI run: the egress URL policy (R26), the receiver inbox's handler,
# the provider signature verifiers,
# the envelope-head reader, the response excerpt, the record codec, the endpoint filter
# language and cdc's pgoutput decoding; longer runs by hand.
# Counts, not durations: a -fuzztime duration that runs out while a worker is busy can fail the
# run with "context deadline exceeded" and no finding (seen in CI-like runs of FuzzUnmarshalDelivery).
test-fuzz: pg-up
	$(GO) test -run '^$$' -fuzz '^FuzzCheckURL$$' -fuzztime 300000x ./egress/
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' $(GO) test -run '^$$' -fuzz '^FuzzHandler$$' -fuzztime 60000x ./webhook/inbox/
	$(GO) test -run '^$$' -fuzz '^FuzzProviderVerifiers$$' -fuzztime 150000x ./webhook/
	$(GO) test -run '^$$' -fuzz '^FuzzReadHead$$' -fuzztime 100000x ./sender/
	$(GO) test -run '^$$' -fuzz '^FuzzExcerpt$$' -fuzztime 8000x ./sender/
	$(GO) test -run '^$$' -fuzz '^FuzzUnmarshalDelivery$$' -fuzztime 300000x ./internal/records/
	$(GO) test -run '^$$' -fuzz '^FuzzAttemptAppendJSON$$' -fuzztime 30000x ./internal/records/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 100000x ./internal/filter/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodePgoutput$$' -fuzztime 100000x ./cdc/
	$(GO) test -run '^$$' -fuzz '^FuzzParseDecimal$$' -fuzztime 20000x ./reseller/
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' $(GO) test -run '^$$' -fuzz '^FuzzRequestBodies$$' -fuzztime 10000x ./reseller/

# The alerting rules: promtool check rules, and promtool test rules on the unit tests in
# deploy/monitoring/tests (promtool is unpacked from Debian's prometheus package on first use).
test-rules:
	bash deploy/monitoring/promtool.sh check

# The deployables, offline (deploy/helm/check.sh): helm lint and helm template of the chart
# deploy/helm/hookstream, with its defaults and with values-secure-kafka.yaml; both renders and
# deploy/k8s validated against Kubernetes' schemas (kubernetes-validate, strict); the Go tests
# that hold them and deploy/Dockerfile to the binary and to a numeric non-root user. helm (built
# from the Go module proxy) and kubernetes-validate (PyPI, in a venv) go into .data/tools on the
# first run, a few minutes; then about a minute.
test-deploy:
	GO='$(GO)' bash deploy/helm/check.sh

test-embedded: pg-up chromium
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' HOOKSTREAM_TEST_KAFKA=embedded $(GOTEST) $(KAFKA_PKGS)

# Three Kafka brokers (deploy/kafka/kafka.sh cluster: KRaft, replication factor 3,
# min.insync.replicas 2) on free loopback ports under .data/test-cluster, and the pipeline on
# them as separate processes: two brokers SIGKILLed one after the other under load, and the
# active cdc killed while a standby waits (internal/testkit/cluster, build tag cluster: it runs here,
# alone, and not in test-real's ./...). About 5 minutes; logs stay in .data/test-cluster/logs.
test-cluster: pg-up
	$(GO) vet -tags cluster ./internal/testkit/cluster/
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' $(GOTEST) -tags cluster ./internal/testkit/cluster/

# Kafka secured (docs/operations.md, "Connecting to a secured Kafka"): a broker whose only
# client listener is SASL_SSL, with SCRAM users and the StandardAuthorizer (deploy/kafka/kafka.sh
# secure, on free loopback ports under .data/test-secure), and every component as its own process
# and its own user with only the ACLs of the table: 2,000 events delivered and verified, a wrong
# password and an untrusted CA not ready with the reason and then delivering, and the ACLs
# refusing what a component must not do (internal/testkit/secure, build tag secure: it runs
# here, alone). About 2 minutes; logs stay in .data/test-secure/logs.
test-secure: pg-up
	$(GO) vet -tags secure ./internal/testkit/secure/
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' $(GOTEST) -tags secure ./internal/testkit/secure/

# The event log read with data teams' tools (docs/consuming-the-log.md): kcat, the doc's Python
# snippets on confluent-kafka and Kafka Connect with Debezium's JDBC sink, on the local broker,
# while the active cdc is SIGKILLed mid-transaction twice (internal/testkit/datalog, build tag
# datalog: it runs here, alone). The tools come from the registries on the first run
# (deploy/datalog/connect.sh tools: Debian's kcat, confluent-kafka from PyPI into a venv, the
# Connect and connector jars from Maven Central into .data/datalog), about 2 minutes; then the
# test takes about a minute. Logs stay in .data/test-datalog/logs.
test-datalog: pg-up kafka-up
	bash deploy/datalog/connect.sh tools
	$(GO) vet -tags datalog ./internal/testkit/datalog/
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' HOOKSTREAM_TEST_KAFKA='$(KAFKA_REAL)' $(GOTEST) -tags datalog ./internal/testkit/datalog/

# The admin API's TypeScript and Python clients (clients/README.md): the committed clients are
# what the pinned generators make of admin/openapi.json (else: make clients), and each language's
# examples, run as their READMEs say against `hookstream dev` (embedded Kafka), create an endpoint,
# send it a test event and read the delivery back, which its Standard Webhooks receiver verified
# (internal/testkit/clients, build tag clients). Node.js, npm and Python 3 come from Debian when
# missing; npm ci (the committed lockfile) and two venvs under .data/clients (pinned lists from
# PyPI) on the first run, about a minute; then about a minute.
test-clients: pg-up
	bash clients/clients.sh check
	$(GO) vet -tags clients ./internal/testkit/clients/
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' $(GOTEST) -tags clients ./internal/testkit/clients/

# Kafka Connect beside the local broker, running deploy/datalog/events-jdbc-sink.properties: the
# events topic hookstream.events upserted into the table hookstream_events of the local database
# (docs/consuming-the-log.md); REST on 127.0.0.1:18083, logs in .data/datalog/connect-run/logs.
connect-up: pg-up kafka-up
	@bash deploy/datalog/connect.sh up

connect-down:
	@bash deploy/datalog/connect.sh down

# Proof under faults (docs/chaos.md; what it proves: docs/reliability.md): its own PostgreSQL and Kafka broker on private ports
# under .data/chaos, every component as its own process (two of each that scales), a steady load,
# random SIGKILLs, a broker kill and an immediate PostgreSQL shutdown, failing receivers; then the
# drain and the ledger (as `hookstream verify-ledger`). Fails on any broken promise.
# CHAOS_DURATION, CHAOS_RATE, CHAOS_SEED, CHAOS_KILLS and CHAOS_FAULTS=off (a baseline without
# process and service faults) tune it, CHAOS_ARGS passes more flags (-h lists them, e.g.
# CHAOS_ARGS='-fail-share 0'); logs stay in .data/chaos/logs.
CHAOS_DURATION ?= 5m
CHAOS_RATE     ?= 1000
CHAOS_ARGS     ?=
chaos:
	@mkdir -p .data/chaos-bin
	$(GO) build -o .data/chaos-bin/hookstream ./cmd/hookstream
	$(GO) build -o .data/chaos-bin/chaos ./bench/chaos
	CHAOS_DURATION='$(CHAOS_DURATION)' CHAOS_RATE='$(CHAOS_RATE)' .data/chaos-bin/chaos -bin .data/chaos-bin/hookstream -repo . $(CHAOS_ARGS)

# The CI size of make chaos, part of make test: 60 s at TEST_CHAOS_RATE (default 1,000, the rate
# of make chaos) events/s, fanout 3, every fault of the 5-minute run. On this 2-core machine it
# drained 36.8-52.6 s after the load (seven runs on 2026-12-02 and 03, docs/reliability.md; bound
# 60 s), so a run on a busy machine can miss the bound.
TEST_CHAOS_RATE ?= 1000
test-chaos:
	$(MAKE) chaos CHAOS_DURATION=60s CHAOS_RATE=$(TEST_CHAOS_RATE)

# Benchmarks: Go programs on real PostgreSQL and real Kafka; figures are medians over runs.

# End to end, what a user sees: every workload (a1 a100 b c d e) in a fresh environment, with the
# components as separate processes on the real broker and as `hookstream dev`, 3 runs; results in
# .data/bench/results.md and .data/bench/latency-*.png, logs in .data/bench/logs/.
# BENCH_ARGS passes more flags, e.g. BENCH_ARGS='-runs 1 -workloads a1,c -modes separate'.
BENCH_ARGS ?=
bench: pg-up kafka-up
	@mkdir -p .data/bench
	$(GO) build -o .data/bench/hookstream ./cmd/hookstream
	$(GO) build -o .data/bench/e2ebench ./bench/e2ebench
	.data/bench/e2ebench -bin .data/bench/hookstream -database-url '$(PG_URL)' -brokers '$(KAFKA_REAL)' -out .data/bench $(BENCH_ARGS)

bench-cdc: pg-up kafka-up
	$(GO) run ./bench/cdcbench -database-url '$(PG_URL)' -brokers '$(KAFKA_REAL)' -runs 3

bench-fanout: pg-up kafka-up
	$(GO) run ./bench/fanoutbench -database-url '$(PG_URL)' -brokers '$(KAFKA_REAL)' -runs 3

# The sender's throughput against a bare net/http loop, in interleaved rounds (sender, bare,
# sender, bare, ...) so both sides of the ratio share the machine's weather; then isolation.
# BENCH_KAFKA=embedded runs it on the embedded cluster instead of the real broker.
BENCH_KAFKA ?= $(KAFKA_REAL)
bench-sender: kafka-up
	@mkdir -p .data
	$(GO) test -c -o .data/sender.test ./sender/
	@rm -f .data/bench-sender.txt
	for i in 1 2 3 4 5; do HOOKSTREAM_TEST_KAFKA='$(BENCH_KAFKA)' .data/sender.test -test.run '^$$' \
		-test.bench 'Throughput' -test.benchtime 40000x > .data/bench-round.txt || { cat .data/bench-round.txt; exit 1; }; \
		grep '^Benchmark' .data/bench-round.txt | tee -a .data/bench-sender.txt; done
	$(GO) run ./bench/benchratio < .data/bench-sender.txt
	HOOKSTREAM_TEST_KAFKA='$(BENCH_KAFKA)' .data/sender.test -test.run '^$$' -test.bench 'Isolation' \
		-test.benchtime 5000x -test.count 3

bench-retry: kafka-up
	$(GO) run ./bench/retrybench -brokers '$(KAFKA_REAL)'

pg-up:
	@$(PG_SH) up >/dev/null

# The console's screenshots in docs/console/ (shown in docs/console.md), taken again by its browser
# test; commit what changed. Without HOOKSTREAM_UPDATE_SCREENSHOTS the test only checks they exist.
console-screenshots: pg-up chromium
	HOOKSTREAM_UPDATE_SCREENSHOTS=1 HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' HOOKSTREAM_TEST_KAFKA=embedded \
		$(GO) test -count=1 -run 'TestConsoleInBrowser$$' ./cmd/hookstream/

# Headless Chromium for the console's browser tests (Debian's chromium package, driven from Go by
# chromedp: no driver binary needed). Installed only when missing; the package index is updated
# only when the package is not found without it.
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser tests" >&2; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2 || \
		{ DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2; }; \
	fi

pg-down:
	@$(PG_SH) down

kafka-up:
	@bash deploy/kafka/kafka.sh up

kafka-down:
	@bash deploy/kafka/kafka.sh down

# Three brokers on 127.0.0.1:19292,19294,19296 (deploy/kafka/README.md) with the project's
# topics (prefix hookstream), replicated on all three.
KAFKA_CLUSTER := 127.0.0.1:19292,127.0.0.1:19294,127.0.0.1:19296
kafka-cluster-up:
	@bash deploy/kafka/kafka.sh cluster up
	$(GO) run ./cmd/hookstream topics create --kafka-brokers '$(KAFKA_CLUSTER)'

kafka-cluster-down:
	@bash deploy/kafka/kafka.sh cluster down

down: connect-down kafka-down pg-down

clean: down
	rm -rf .data bin clients/typescript/node_modules clients/typescript/dist
