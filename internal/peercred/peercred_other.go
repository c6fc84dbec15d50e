//go:build !linux && !darwin && !freebsd

package peercred

import (
	"errors"
	"net"
)

// errNoPeerCred means this system offers no way to learn a peer's user
// that this package knows; the daemon then refuses every connection rather
// than serve users it cannot tell apart, and a client every daemon.
var errNoPeerCred = errors.New("peer credentials not supported here")

// UID returns the uid of the process at the other end of c.
func UID(*net.UnixConn) (int, error) { return -1, errNoPeerCred }
