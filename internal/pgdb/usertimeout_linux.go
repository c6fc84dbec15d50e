package pgdb

import (
	"syscall"
	"time"
)

// setUserTimeout sets TCP_USER_TIMEOUT: data unacknowledged for that long
// breaks the connection, so a write to a vanished peer fails in a lease.
func setUserTimeout(fd uintptr, d time.Duration) error {
	const tcpUserTimeout = 0x12 // TCP_USER_TIMEOUT, linux/tcp.h
	return syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
}
