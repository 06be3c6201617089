package cdc

import (
	"crypto/tls"
	"net"
	"syscall"
)

// holdLowat is the replication socket's low-water mark while cdc sleeps between reads: the
// kernel wakes no one for less unread data. A megabyte is far more than a read interval brings at
// a steady load, and as a receive window (Linux clamps the window to a mark it raises the buffer
// for) still carries 100 MB/s at a 10 ms round trip.
const holdLowat = 1 << 20

// socketHold returns a function that raises (true) and lowers (false) the low-water mark of
// conn's socket (SO_RCVLOWAT), or nil when conn is not a socket the kernel can tell that.
//
// While the mark is up, data arriving on the socket wakes nothing: without it, each PostgreSQL
// transaction's messages woke the process's network poller while cdc slept between reads (Go
// waits for every socket's readiness, read or not), about two wake-ups and three context
// switches an event at a steady load. A read takes what is there whatever the mark, so it is
// lowered again only before cdc may wait for data.
func socketHold(conn net.Conn) func(bool) {
	if t, ok := conn.(*tls.Conn); ok {
		conn = t.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	set := func(v int) error {
		var serr error
		if err := raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, v)
		}); err != nil {
			return err
		}
		return serr
	}
	if set(1) != nil {
		return nil
	}
	return func(hold bool) {
		v := 1
		if hold {
			v = holdLowat
		}
		_ = set(v) // a socket that refuses keeps waking, as without the mark
	}
}
