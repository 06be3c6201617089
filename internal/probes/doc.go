// Package probes serves what every long-running hookstream process answers besides its own work:
// GET /healthz (the process is alive), GET /readyz (every dependency the process was given as a
// [Check] answers) and GET /metrics (Prometheus text format). The component commands serve it on
// their metrics address; the admin command mounts it beside its API, or serves it on a metrics
// address of its own and keeps only [Health] beside its API.
//
// /healthz answers 200 whenever the process can serve HTTP. /readyz answers 200 when every check
// answers within two seconds, else 503 with each failing check's error. /healthz consults no
// check, so a dependency's outage makes the process not ready, never unhealthy.
package probes
