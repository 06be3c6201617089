package testenv

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// UnansweredAddr returns a 127.0.0.1 address (host:port) whose TCP handshake never completes:
// a receiver that accepts no connection, as a host behind a firewall that drops packets looks to
// a client. It is a listening socket with a backlog of 0 that never accepts, its accept queue
// filled by connections of its own, so the kernel drops every further SYN and a client's connect
// hangs until its own timeout. Closed when the test ends.
func UnansweredAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("testenv: unanswered socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("testenv: unanswered bind: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatalf("testenv: unanswered listen: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("testenv: unanswered getsockname: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Fill the accept queue: connect until a connect hangs.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err == nil {
			t.Cleanup(func() { c.Close() })
			if i >= 16 {
				t.Fatalf("testenv: unanswered: %d connections completed; the backlog does not fill", i+1)
			}
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return addr
		}
		t.Fatalf("testenv: unanswered: filling the backlog: %v", err)
	}
}
