package server

import (
	"context"
	"errors"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// wireError turns any error from a method into a JSON-RPC error. internal
// reports whether it is one the operator should see in the log.
func wireError(err error) (e *jsonrpc.Error, internal bool) {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je, false
	}
	var se *session.Error
	if errors.As(err, &se) {
		e := &jsonrpc.Error{Code: se.Code, Message: se.Message}
		if se.Code == wire.CodeSessionSealed {
			e.Data = wire.SealedData{SuccessorID: se.SuccessorID}
		}
		if se.Code == wire.CodeSessionLeased && se.Lease != nil {
			e.Data = wire.LeasedData{Owner: se.Lease.Owner, ExpiresAt: se.Lease.ExpiresAt}
		}
		return e, se.Code == wire.CodeInternal || se.Code == wire.CodeStorageUnavailable
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return jsonrpc.Errorf(wire.CodeInternal, "request cancelled: %v", err), false
	}
	return jsonrpc.Errorf(wire.CodeInternal, "internal error: %v", err), true
}
