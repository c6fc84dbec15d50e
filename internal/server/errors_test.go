package server

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestWireError(t *testing.T) {
	// Ensures every session error keeps its JSON-RPC code (the numbers are
	// the protocol's), the sealed error carries the successor, and unknown
	// errors are internal.
	for code, want := range map[int64]int64{
		wire.CodeInvalidParams: -32602, wire.CodeSessionNotFound: -32001, wire.CodeSessionSealed: -32002,
		wire.CodeCallIDConflict: -32003, wire.CodeStorageUnavailable: -32004, wire.CodeSessionExists: -32005,
		wire.CodeInternal: -32603,
	} {
		e, _ := wireError(fmt.Errorf("wrapped: %w", &session.Error{Code: code, Message: "m", SuccessorID: "next"}))
		assert.Equal(t, want, e.Code, code)
		assert.Equal(t, "m", e.Message)
		if code == wire.CodeSessionSealed {
			assert.Equal(t, wire.SealedData{SuccessorID: "next"}, e.Data)
		} else {
			assert.Nil(t, e.Data)
		}
	}
	e, internal := wireError(errors.New("boom"))
	assert.Equal(t, int64(wire.CodeInternal), e.Code)
	assert.True(t, internal)
	_, internal = wireError(&session.Error{Code: wire.CodeStorageUnavailable})
	assert.True(t, internal, "storage failures are logged")
	_, internal = wireError(&session.Error{Code: wire.CodeSessionNotFound})
	assert.False(t, internal)
}
