package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCtxMutex(t *testing.T) {
	// Ensures the session lock excludes, hands over to a waiter on unlock,
	// lets a waiter whose context ends go without the lock, and is usable
	// as its zero value.
	var m ctxMutex
	require.NoError(t, m.Lock(context.Background()))
	assert.False(t, m.TryLock(), "held")

	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() { gaveUp <- m.Lock(ctx) }()
	got := make(chan error)
	go func() { got <- m.Lock(context.Background()) }()
	cancel()
	assert.ErrorIs(t, <-gaveUp, context.Canceled)
	select {
	case <-got:
		t.Fatal("a waiter took a held lock")
	case <-time.After(20 * time.Millisecond):
	}
	m.Unlock()
	require.NoError(t, <-got, "the remaining waiter takes it")
	assert.False(t, m.TryLock())
	m.Unlock()
	assert.True(t, m.TryLock())
	m.Unlock()
	assert.Panics(t, m.Unlock, "unlocking a free lock is a bug")
}

func TestCtxMutexExcludes(t *testing.T) {
	// Ensures no two holders at once under contention (run with -race).
	var m ctxMutex
	var wg sync.WaitGroup
	n := 0
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if !assert.NoError(t, m.Lock(context.Background())) {
					return
				}
				n++
				m.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 8*500, n)
}
