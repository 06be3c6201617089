package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
)

// The event log's retention is set apart from the feed's and the delivery history's (R33):
// `topics create` gives the events topic HOOKSTREAM_EVENT_LOG_RETENTION (forever: retention.ms
// -1) while the work topics keep theirs, and the recorder and admin read
// HOOKSTREAM_HISTORY_RETENTION alone for the history.
func TestEventLogRetentionApartFromHistory(t *testing.T) {
	k := testenv.NewKafka(t)
	t.Setenv("HOOKSTREAM_EVENT_LOG_RETENTION", "forever")
	t.Setenv("HOOKSTREAM_HISTORY_RETENTION", "48h")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"create", "--kafka-brokers", strings.Join(k.Brokers, ","), "--topic-prefix", k.Prefix, "--topic-partitions", "3"}
	if err := runTopics(ctx, args, io.Discard); err != nil {
		t.Fatal(err)
	}
	names := topics.For(k.Prefix)
	rc, err := kadm.NewClient(k.Client(t)).DescribeTopicConfigs(ctx, names.Events, names.Deliveries)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]string{names.Events: "-1", names.Deliveries: "604800000"} {
		c, err := rc.On(topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, kv := range c.Configs {
			if kv.Key == "retention.ms" && kv.Value != nil {
				got = *kv.Value
			}
		}
		if got != want {
			t.Errorf("%s retention.ms = %q, want %q", topic, got, want)
		}
	}

	// Unset, the log keeps what the feed promises; shorter than that is refused.
	t.Setenv("HOOKSTREAM_EVENT_LOG_RETENTION", "")
	s, err := parseSettings("topics", []string{"--feed-retention", "100h"}, io.Discard)
	if err != nil || s.topicConfig().EventLogRetention != 100*time.Hour {
		t.Errorf("unset: %v, %v", s.topicConfig().EventLogRetention, err)
	}
	s, err = parseSettings("topics", []string{"--event-log-retention", "24h"}, io.Discard)
	if err != nil || s.topicConfig().Validate() == nil {
		t.Errorf("a log shorter than the feed accepted: %v", err)
	}
	if _, err := parseSettings("topics", []string{"--event-log-retention", "-2h"}, io.Discard); err == nil {
		t.Error("a negative retention accepted")
	}

	// The history's retention is the recorder's sweep's (recorder/history_test.go shows the
	// sweep keeping it) and what admin states, whatever the log keeps.
	t.Setenv("HOOKSTREAM_EVENT_LOG_RETENTION", "forever")
	s, err = parseSettings("recorder", nil, io.Discard)
	if err != nil || s.recorderConfig(nil, nil).HistoryRetention != 48*time.Hour {
		t.Errorf("recorder: history retention %s, %v", s.recorderConfig(nil, nil).HistoryRetention, err)
	}
	s, err = parseSettings("admin", nil, io.Discard)
	if err != nil || s.HistoryRetention != 48*time.Hour || s.eventLogRetention() != topics.RetainForever {
		t.Errorf("admin: history retention %s, event log %s, %v", s.HistoryRetention, s.eventLogRetention(), err)
	}
}
