// Package embeddedkafka runs franz-go's kfake cluster inside the process: the Kafka of
// `hookstream dev` and of the fast test lane. It speaks the Kafka protocol on loopback, including
// transactions and consumer groups, so the same client code runs against it and a real broker.
package embeddedkafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Config says where the cluster listens and whether it keeps its data.
type Config struct {
	// Port to listen on at 127.0.0.1; 0 picks a free port.
	Port int
	// DataDir, when set, persists the cluster's logs and offsets across restarts.
	DataDir string
	// Partitions is the partition count of topics created without one.
	Partitions int
}

// Cluster is a running embedded Kafka.
type Cluster struct {
	c *kfake.Cluster
}

// Start brings up a one-broker cluster bound to 127.0.0.1 only.
func Start(cfg Config) (*Cluster, error) {
	if cfg.Partitions <= 0 {
		cfg.Partitions = 1
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(cfg.Partitions),
	}
	if cfg.Port != 0 {
		// kfake always binds 127.0.0.1; only the port is ours to choose.
		opts = append(opts, kfake.Ports(cfg.Port))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("embeddedkafka: start: %w", err)
	}
	return &Cluster{c: c}, nil
}

// Brokers returns the seed addresses to give a client.
func (c *Cluster) Brokers() []string { return c.c.ListenAddrs() }

// Close stops the cluster, flushing persisted data.
func (c *Cluster) Close() { c.c.Close() }
