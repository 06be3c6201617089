// Package secure runs a Kafka broker that wants TLS, SCRAM and ACLs (deploy/kafka/kafka.sh
// secure, on free loopback ports with its data under a directory of the test's) and holds, as
// code, the ACLs each hookstream component needs (ACLs), which docs/operations.md tabulates.
// Its tests (build tag secure, `make test-secure`) run every component as its own process on it,
// each as its own SCRAM user with only its own ACLs, and check that the pipeline delivers
// everything, that a refused password or an untrusted CA makes a component not ready with the
// reason and that it delivers once corrected, and that the ACLs refuse what a component must
// not do.
package secure
