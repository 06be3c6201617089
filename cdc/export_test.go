package cdc

import (
	"context"
	"net"
	"sync/atomic"
)

// CountReplicationReads makes the replication connection of cfg's cdc count in n its reads that
// return data.
func CountReplicationReads(cfg *Config, n *atomic.Int64) {
	var d net.Dialer
	cfg.dialReplication = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, reads: n}, nil
	}
}

// countingConn counts the reads of a connection that return data.
type countingConn struct {
	net.Conn
	reads *atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.reads.Add(1)
	}
	return n, err
}
