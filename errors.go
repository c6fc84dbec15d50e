package tasksessiond

import (
	"errors"
	"fmt"
	"time"
)

// Errors the storages and the list return, for callers to branch on with
// errors.Is.
var (
	ErrNotFound     = errors.New("not found")
	ErrTaskNotFound = errors.New("task not found")
	ErrExists       = errors.New("already exists")
	ErrSealed       = errors.New("session already compacted")
	ErrBadCursor    = errors.New("bad cursor")
	// ErrVanished means the file at the database's path is no longer the
	// one the daemon opened (deleted, moved or replaced): a write would go
	// into a file no one can open again, so none is taken.
	ErrVanished = errors.New("the database file is gone")
	// ErrLeaseExpired is an append or a confirmation by a daemon whose
	// lease ran out (it could not renew in time) with no other daemon
	// holding the session yet: memory may be stale, so the manager drops
	// the session.
	ErrLeaseExpired = errors.New("this daemon's lease on the session has expired")
)

// LeaseHeldError is a session served by another daemon. Appends return
// it too, from a daemon that has lost the lease (fencing).
type LeaseHeldError struct {
	SessionID string
	Owner     string // the holder's id, host and pid
	ExpiresAt time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("session %s is served by another daemon (%s) until its lease expires at %s",
		e.SessionID, e.Owner, e.ExpiresAt.UTC().Format(time.RFC3339Nano))
}
