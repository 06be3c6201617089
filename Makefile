# hookstream — the one entry point for building, running and testing.
#   make dev    the quick start: local PostgreSQL + `hookstream dev` (embedded Kafka, admin on :8080)
#   make test   everything CI runs: vet, and the whole suite against real PostgreSQL and real Kafka,
#               then the Kafka-dependent packages again against embedded kfake
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO         ?= go
PG_URL     := postgres://postgres@127.0.0.1:54329/hookstream?sslmode=disable
KAFKA_REAL := 127.0.0.1:19092
GOTEST     ?= $(GO) test -race -count=1 -timeout 30m

# Packages whose tests use Kafka (they call testenv.NewKafka); they run on both lanes.
KAFKA_PKGS = $(shell grep -rl --include='*_test.go' 'testenv.NewKafka' . | xargs -r -n1 dirname | sort -u)

.PHONY: all build dev test test-real test-embedded test-fuzz vet bench-cdc bench-fanout bench-sender bench-retry pg-up pg-down kafka-up kafka-down down clean

all: build

build:
	$(GO) build -o bin/hookstream ./cmd/hookstream

dev: pg-up
	$(GO) run ./cmd/hookstream dev

vet:
	$(GO) vet ./...

test: pg-up kafka-up vet test-real test-embedded test-fuzz

test-real: pg-up kafka-up
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' HOOKSTREAM_TEST_KAFKA='$(KAFKA_REAL)' $(GOTEST) ./...

# A short fuzzing run of the egress URL policy in every CI run (R26); longer runs by hand.
test-fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzCheckURL$$' -fuzztime 15s ./sender/egress/
	$(GO) test -run '^$$' -fuzz '^FuzzReadHead$$' -fuzztime 10s ./sender/
	$(GO) test -run '^$$' -fuzz '^FuzzUnmarshalDelivery$$' -fuzztime 10s ./internal/records/
	$(GO) test -run '^$$' -fuzz '^FuzzAttemptAppendJSON$$' -fuzztime 10s ./internal/records/

test-embedded: pg-up
	HOOKSTREAM_TEST_DATABASE_URL='$(PG_URL)' HOOKSTREAM_TEST_KAFKA=embedded $(GOTEST) $(KAFKA_PKGS)

# Benchmarks: Go programs on real PostgreSQL and real Kafka; figures are medians over runs.
bench-cdc: pg-up kafka-up
	$(GO) run ./internal/bench/cdcbench -database-url '$(PG_URL)' -brokers '$(KAFKA_REAL)' -runs 3

bench-fanout: pg-up kafka-up
	$(GO) run ./internal/bench/fanoutbench -database-url '$(PG_URL)' -brokers '$(KAFKA_REAL)' -runs 3

bench-sender: kafka-up
	HOOKSTREAM_TEST_KAFKA='$(KAFKA_REAL)' $(GO) test -run '^$$' -bench 'Throughput|Isolation' -benchtime 20000x -count 3 ./sender/

bench-retry: kafka-up
	$(GO) run ./internal/bench/retrybench -brokers '$(KAFKA_REAL)'

pg-up:
	@bash deploy/local/pg.sh up >/dev/null

pg-down:
	@bash deploy/local/pg.sh down

kafka-up:
	@bash deploy/kafka/kafka.sh up

kafka-down:
	@bash deploy/kafka/kafka.sh down

down: kafka-down pg-down

clean: down
	rm -rf .data bin
