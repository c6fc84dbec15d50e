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
	// ErrDamaged means what the database holds contradicts itself (edited
	// by hand, say): the session is not served, and fsck says what and
	// what to do.
	ErrDamaged = errors.New("the database is damaged")
	// ErrNewerSchema means a newer tasksessiond has migrated a fleet's
	// database past the schema this daemon knows: it writes nothing more
	// and gives up its sessions, which the fleet's newer daemons serve.
	ErrNewerSchema = errors.New("a newer tasksessiond migrated the database")
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

// LockedError is a write that waited its time for the database's write
// lock while another process held it (a sqlite3 shell in a transaction,
// say): nothing was written, and writes resume when it is released.
type LockedError struct {
	Holder string // "pid 1234, sqlite3" where it can be told, else ""
	Err    error  // the storage's own error
}

func (e *LockedError) Error() string {
	who := ""
	if e.Holder != "" {
		who = " (" + e.Holder + ")"
	}
	return "the database is locked by another process" + who + "; writes resume when it is released"
}

func (e *LockedError) Unwrap() error { return e.Err }

// Kind is what kind of failure an Error is: what a caller branches on.
// The server maps each kind to a JSON-RPC error code in one table.
type Kind string

const (
	KindInvalid     Kind = "invalid"     // the request is wrong: its message says how to fix it
	KindNotFound    Kind = "notFound"    // no such session
	KindExists      Kind = "exists"      // a session with that id exists already
	KindSealed      Kind = "sealed"      // the session was compacted: SuccessorID takes its writes
	KindConflict    Kind = "conflict"    // a callId used before for another call
	KindLeased      Kind = "leased"      // another daemon of the fleet serves the session: Lease
	KindUnavailable Kind = "unavailable" // the storage failed; nothing was changed
	KindDamaged     Kind = "damaged"     // the session's log fails its check: refused until fsck
	KindInternal    Kind = "internal"    // a bug or an unforeseen failure
)

// Error is a failure a client can branch on, by its Kind, with a message
// for whoever reads it.
type Error struct {
	Kind        Kind
	Message     string
	SuccessorID string          // for KindSealed
	Lease       *LeaseHeldError // for KindLeased: who holds the session
	Err         error           // the cause, for logs
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error of kind with a formatted message.
func Errorf(kind Kind, format string, a ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, a...)}
}

// KindOf returns the kind of err: KindInternal for an error that is not an
// *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
