package server

import (
	"context"
	"errors"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/wire"
)

// codes is the one table from the domain's kinds of failure to the
// JSON-RPC codes of package wire.
var codes = map[tasksessiond.Kind]int64{
	tasksessiond.KindInvalid:     wire.CodeInvalidParams,
	tasksessiond.KindNotFound:    wire.CodeSessionNotFound,
	tasksessiond.KindExists:      wire.CodeSessionExists,
	tasksessiond.KindSealed:      wire.CodeSessionSealed,
	tasksessiond.KindConflict:    wire.CodeCallIDConflict,
	tasksessiond.KindLeased:      wire.CodeSessionLeased,
	tasksessiond.KindUnavailable: wire.CodeStorageUnavailable,
	tasksessiond.KindDamaged:     wire.CodeSessionDamaged,
	tasksessiond.KindInternal:    wire.CodeInternal,
}

// wireError turns any error from a method into a JSON-RPC error. internal
// reports whether it is one the operator should see in the log.
func wireError(err error) (e *jsonrpc.Error, internal bool) {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je, false
	}
	var de *tasksessiond.Error
	if errors.As(err, &de) {
		code, ok := codes[de.Kind]
		if !ok {
			code = wire.CodeInternal
		}
		e := &jsonrpc.Error{Code: code, Message: de.Message}
		switch {
		case de.Kind == tasksessiond.KindSealed:
			e.Data = wire.SealedData{SuccessorID: de.SuccessorID}
		case de.Kind == tasksessiond.KindLeased && de.Lease != nil:
			e.Data = wire.LeasedData{Owner: de.Lease.Owner, ExpiresAt: de.Lease.ExpiresAt}
		}
		return e, code == wire.CodeInternal || code == wire.CodeStorageUnavailable || code == wire.CodeSessionDamaged
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return jsonrpc.Errorf(wire.CodeInternal, "request cancelled: %v", err), false
	}
	return jsonrpc.Errorf(wire.CodeInternal, "internal error: %v", err), true
}
