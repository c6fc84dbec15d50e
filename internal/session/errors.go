package session

import (
	"errors"
	"fmt"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Error is an error a client can branch on.
//
// Its Code is a JSON-RPC error code, declared once in package wire.
type Error struct {
	Code        int64
	Message     string
	SuccessorID string                       // for wire.CodeSessionSealed
	Lease       *tasksessiond.LeaseHeldError // for wire.CodeSessionLeased: who holds the session
	Err         error                        // the cause, for logs
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of err, wire.CodeInternal for an unknown error.
func ErrorCode(err error) int64 {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return wire.CodeInternal
}

func errorf(code int64, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func unavailable(what string, err error) *Error {
	// A fleet's lease is not storage failing: say who serves the session.
	var held *tasksessiond.LeaseHeldError
	if errors.As(err, &held) {
		return &Error{Code: wire.CodeSessionLeased, Lease: held, Err: err,
			Message: what + " failed: " + held.Error() + "; nothing was changed: send the call to that daemon, or retry once the lease has expired"}
	}
	if errors.Is(err, tasksessiond.ErrVanished) {
		return &Error{Code: wire.CodeStorageUnavailable, Message: what + " failed: " + err.Error() + "; nothing was changed", Err: err}
	}
	if errors.Is(err, tasksessiond.ErrLeaseExpired) {
		// Not the database failing: this daemon lost the session's lease
		// (it paused, or could not reach the database, for a lease).
		return &Error{Code: wire.CodeStorageUnavailable, Err: err,
			Message: what + " failed: this daemon's lease on the session expired before the call could be answered (the daemon was paused or cut off from the database for longer than the lease), and no other daemon has taken it since; nothing was changed: retry the call, which loads the session afresh"}
	}
	return &Error{Code: wire.CodeStorageUnavailable, Message: what + " failed: storage is unavailable, nothing was changed; retry the call once the database is writable again", Err: err}
}
