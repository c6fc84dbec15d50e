package session

import (
	"errors"
	"fmt"
)

// Code classifies a session error; the server maps each to its JSON-RPC code
// in one table.
type Code string

const (
	CodeInvalid     Code = "invalid"     // bad params
	CodeNotFound    Code = "not_found"   // no such session
	CodeSealed      Code = "sealed"      // the session was compacted
	CodeConflict    Code = "conflict"    // callId reused with different arguments
	CodeUnavailable Code = "unavailable" // storage failed
	CodeExists      Code = "exists"      // session id taken
	CodeLeased      Code = "leased"      // served by another daemon of a fleet
	CodeInternal    Code = "internal"
)

// Error is an error a client can branch on.
type Error struct {
	Code        Code
	Message     string
	SuccessorID string          // for CodeSealed
	Lease       *LeaseHeldError // for CodeLeased: who holds the session
	Err         error           // the cause, for logs
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of err, CodeInternal for an unknown error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

func errorf(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func unavailable(what string, err error) *Error {
	// A fleet's lease is not storage failing: say who serves the session.
	var held *LeaseHeldError
	if errors.As(err, &held) {
		return &Error{Code: CodeLeased, Lease: held, Err: err,
			Message: what + " failed: " + held.Error() + "; nothing was changed: send the call to that daemon, or retry once the lease has expired"}
	}
	return &Error{Code: CodeUnavailable, Message: what + " failed: storage is unavailable, nothing was changed; retry the call once the database is writable again", Err: err}
}
