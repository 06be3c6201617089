package cdc

import (
	"net"
	"testing"
	"time"
)

// While the socket is held, data that arrives wakes no reader waiting for it; lowering the mark
// wakes it with the data, and a read of data already there returns at once whatever the mark.
func TestSocketHoldQuietsArrivalsUntilLowered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer server.Close()

	hold := socketHold(client)
	if hold == nil {
		t.Fatal("socketHold: nil for a TCP connection on Linux")
	}
	hold(true)
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, err := client.Read(buf)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	time.Sleep(50 * time.Millisecond) // the reader is waiting for data
	if _, err := server.Write([]byte("one transaction")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		t.Fatalf("held socket: the waiting reader woke for %d bytes (%q)", len(s), s)
	case <-time.After(300 * time.Millisecond):
	}
	hold(false)
	select {
	case s := <-got:
		if s != "one transaction" {
			t.Fatalf("read %q after lowering the mark", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lowering the mark did not wake the reader")
	}

	hold(true)
	if _, err := server.Write([]byte("already there")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := client.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	start := time.Now()
	n, err := client.Read(buf)
	if err != nil || string(buf[:n]) != "already there" {
		t.Fatalf("read of data already there while held: %q, %v", buf[:n], err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("the read of data already there waited %v for the mark", waited)
	}
	hold(false)
}

// A connection that is not a socket is left alone.
func TestSocketHoldOfAPipeIsNil(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if socketHold(a) != nil {
		t.Fatal("socketHold of a pipe: want nil")
	}
}
