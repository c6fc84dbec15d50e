//go:build !linux && !darwin && !freebsd

package server

import (
	"errors"
	"net"
)

// errNoPeerCred means this system offers no way to learn a peer's user
// that the daemon knows; the daemon then refuses every connection rather
// than serve users it cannot tell apart.
var errNoPeerCred = errors.New("peer credentials not supported here")

func peerUID(*net.UnixConn) (int, error) { return -1, errNoPeerCred }
