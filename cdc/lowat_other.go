//go:build !linux

package cdc

import "net"

// socketHold is Linux's alone (lowat_linux.go); elsewhere the socket wakes as it will.
func socketHold(net.Conn) func(bool) { return nil }
