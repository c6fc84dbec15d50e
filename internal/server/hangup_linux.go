package server

import (
	"net"

	"golang.org/x/sys/unix"
)

// hungUp reports whether the peer has closed its socket for good, not just
// shut down its writing half: a Unix socket then polls as POLLHUP.
func hungUp(nc *net.UnixConn) bool {
	raw, err := nc.SyscallConn()
	if err != nil {
		return true
	}
	hup := true
	raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 1 {
			hup = fds[0].Revents&unix.POLLHUP != 0
		}
	})
	return hup
}
