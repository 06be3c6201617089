// Package harness is what the programs that run hookstream from the outside share: the
// end-to-end benchmark (bench/e2ebench) and the chaos run (bench/chaos). It starts
// hookstream commands as child processes that die with their parent (Pdeathsig), waits for their
// probes and consumer groups, calls the admin API as the operator, commits catalog-valid events
// through outbox.Writer at a bounded rate, and receives webhooks on loopback with verifying
// receivers built on the webhook package.
//
// Every wait here is bounded, every load loop is bounded in count and time, and every address is
// a loopback one.
package harness
