package server

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestWireError(t *testing.T) {
	// Ensures every kind of failure keeps its JSON-RPC code (the numbers
	// are the protocol's), the sealed error carries the successor and the
	// leased one its holder, and unknown errors are internal.
	want := map[tasksessiond.Kind]int64{
		tasksessiond.KindInvalid: -32602, tasksessiond.KindNotFound: -32001, tasksessiond.KindSealed: -32002,
		tasksessiond.KindConflict: -32003, tasksessiond.KindUnavailable: -32004, tasksessiond.KindExists: -32005,
		tasksessiond.KindLeased: -32006, tasksessiond.KindDamaged: -32007, tasksessiond.KindInternal: -32603,
	}
	assert.Len(t, codes, len(want), "every kind is in the table")
	lease := &tasksessiond.LeaseHeldError{SessionID: "s", Owner: "o", ExpiresAt: time.Unix(1, 0)}
	for kind, code := range want {
		e, _ := wireError(fmt.Errorf("wrapped: %w", &tasksessiond.Error{Kind: kind, Message: "m", SuccessorID: "next", Lease: lease}))
		assert.Equal(t, code, e.Code, kind)
		assert.Equal(t, "m", e.Message)
		switch kind {
		case tasksessiond.KindSealed:
			assert.Equal(t, wire.SealedData{SuccessorID: "next"}, e.Data)
		case tasksessiond.KindLeased:
			assert.Equal(t, wire.LeasedData{Owner: "o", ExpiresAt: time.Unix(1, 0)}, e.Data)
		default:
			assert.Nil(t, e.Data)
		}
	}
	e, internal := wireError(errors.New("boom"))
	assert.Equal(t, int64(wire.CodeInternal), e.Code)
	assert.True(t, internal)
	_, internal = wireError(&tasksessiond.Error{Kind: tasksessiond.KindUnavailable})
	assert.True(t, internal, "storage failures are logged")
	_, internal = wireError(&tasksessiond.Error{Kind: tasksessiond.KindNotFound})
	assert.False(t, internal)
}
