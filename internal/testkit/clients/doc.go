// Package clients proves the admin API's TypeScript and Python clients (clients/, generated from
// admin/openapi.json) and their receiving examples against a real `hookstream dev`: each
// language's examples create an endpoint, send it a test event and read the delivery back, and
// its Standard Webhooks receiver verifies that very delivery. Its test (build tag clients,
// `make test-clients`) runs the examples as a user would, with the runtimes and the registries'
// packages clients/clients.sh installs.
package clients
