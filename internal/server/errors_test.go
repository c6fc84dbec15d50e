package server

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestWireError(t *testing.T) {
	// Ensures every session error code maps to its JSON-RPC code, the sealed
	// error carries the successor, and unknown errors are internal.
	for code, want := range map[session.Code]int64{
		session.CodeInvalid: -32602, session.CodeNotFound: -32001, session.CodeSealed: -32002,
		session.CodeConflict: -32003, session.CodeUnavailable: -32004, session.CodeExists: -32005,
		session.CodeInternal: -32603,
	} {
		e, _ := wireError(fmt.Errorf("wrapped: %w", &session.Error{Code: code, Message: "m", SuccessorID: "next"}))
		assert.Equal(t, want, e.Code, code)
		assert.Equal(t, "m", e.Message)
		if code == session.CodeSealed {
			assert.Equal(t, wire.SealedData{SuccessorID: "next"}, e.Data)
		} else {
			assert.Nil(t, e.Data)
		}
	}
	e, internal := wireError(errors.New("boom"))
	assert.Equal(t, int64(jsonrpc.CodeInternal), e.Code)
	assert.True(t, internal)
	_, internal = wireError(&session.Error{Code: session.CodeUnavailable})
	assert.True(t, internal, "storage failures are logged")
	_, internal = wireError(&session.Error{Code: session.CodeNotFound})
	assert.False(t, internal)
}
