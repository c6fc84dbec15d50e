package server

import (
	"context"
	"errors"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// codes maps session error codes to JSON-RPC codes: the one place where
// domain errors meet the wire.
var codes = map[session.Code]int64{
	session.CodeInvalid:     jsonrpc.CodeInvalidParams,
	session.CodeNotFound:    jsonrpc.CodeSessionNotFound,
	session.CodeSealed:      jsonrpc.CodeSessionSealed,
	session.CodeConflict:    jsonrpc.CodeCallIDConflict,
	session.CodeUnavailable: jsonrpc.CodeStorageUnavailable,
	session.CodeExists:      jsonrpc.CodeSessionExists,
	session.CodeInternal:    jsonrpc.CodeInternal,
	session.CodeLeased:      wire.CodeSessionLeased,
}

// wireError turns any error from a method into a JSON-RPC error. internal
// reports whether it is one the operator should see in the log.
func wireError(err error) (e *jsonrpc.Error, internal bool) {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je, false
	}
	var se *session.Error
	if errors.As(err, &se) {
		e := &jsonrpc.Error{Code: codes[se.Code], Message: se.Message}
		if se.Code == session.CodeSealed {
			e.Data = wire.SealedData{SuccessorID: se.SuccessorID}
		}
		if se.Code == session.CodeLeased && se.Lease != nil {
			e.Data = wire.LeasedData{Owner: se.Lease.Owner, ExpiresAt: se.Lease.ExpiresAt}
		}
		return e, se.Code == session.CodeInternal || se.Code == session.CodeUnavailable
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return jsonrpc.Errorf(jsonrpc.CodeInternal, "request cancelled: %v", err), false
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternal, "internal error: %v", err), true
}
