//go:build !linux

package server

import (
	"errors"
	"net"
)

// errNoPeerCred means this system offers no SO_PEERCRED; the socket's mode
// (0600 in a 0700 directory) is then the only guard.
var errNoPeerCred = errors.New("peer credentials not supported here")

func peerUID(*net.UnixConn) (int, error) { return -1, errNoPeerCred }
