package retrytopics_test

import (
	"github.com/hookstream/hookstream/retrytopics"
	"github.com/hookstream/hookstream/sender"
)

// The sender hands its retries to a Scheduler.
var _ sender.Retrier = (*retrytopics.Scheduler)(nil)
