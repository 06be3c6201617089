// Package scratch makes and removes the throwaway PostgreSQL resources that tests (mostly through
// internal/testkit/testenv), the benchmark programs (bench/…) and the chaos run stand on: a fresh
// database, empty, copied from a template or migrated; its removal together with every
// replication slot on it; the wait until a cdc slot streams; and random names that keep
// concurrent runs apart.
//
// It returns errors and never imports testing, so programs can use it; testenv turns
// its errors into test failures. The rules live here once: a copy in a program drifts from the
// tests' (a slot that is active is not yet streaming, see WaitSlotStreaming).
package scratch
