package db

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAppendHonoursContextBeforeHandOver(t *testing.T) {
	// Ensures a caller whose context ends before the writer takes its
	// request (here the writer never does) stops waiting with that error.
	d := &DB{appends: make(chan *appendReq), closed: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, d.AppendCalls(ctx, nil), context.DeadlineExceeded)
}
