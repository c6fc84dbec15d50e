//go:build !linux

package pgdb

import "time"

// setUserTimeout: TCP_USER_TIMEOUT is Linux's; elsewhere keepalives alone
// find a vanished peer.
func setUserTimeout(uintptr, time.Duration) error { return nil }
