package session

import "context"

// ctxMutex is a mutex whose Lock gives up when its context ends, so a call
// whose peer has hung up stops waiting for a busy session.
type ctxMutex chan struct{}

func newCtxMutex() ctxMutex { return make(ctxMutex, 1) }

// Lock takes the mutex, or returns ctx's error if ctx ends first.
func (m ctxMutex) Lock(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryLock takes the mutex if it is free.
func (m ctxMutex) TryLock() bool {
	select {
	case m <- struct{}{}:
		return true
	default:
		return false
	}
}

// Unlock releases the mutex.
func (m ctxMutex) Unlock() { <-m }
