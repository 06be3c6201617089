// Package retrytopics schedules retries over days through tiered delay topics (R22): records are
// held until due with partition pause/resume, never released early and never lost across
// restarts; exhausted deliveries go to the dead-letter topic, and endpoints that keep failing are
// warned and then disabled (R23).
package retrytopics
