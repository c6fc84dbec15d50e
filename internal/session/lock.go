package session

import (
	"context"
	"sync"
)

// ctxMutex is a mutex whose Lock gives up when its context ends, so a call
// whose peer has hung up stops waiting for a busy session. Its zero value
// is unlocked. A channel is made only while someone waits: an idle session
// holds no more than a sync.Mutex and two words.
type ctxMutex struct {
	mu     sync.Mutex
	locked bool
	wait   chan struct{} // closed at the next Unlock; nil when nobody waits
}

// Lock takes the mutex, or returns ctx's error if ctx ends first.
func (m *ctxMutex) Lock(ctx context.Context) error {
	for {
		m.mu.Lock()
		if !m.locked {
			m.locked = true
			m.mu.Unlock()
			return nil
		}
		if m.wait == nil {
			m.wait = make(chan struct{})
		}
		wait := m.wait
		m.mu.Unlock()
		select {
		case <-wait: // released: race the other waiters for it
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TryLock takes the mutex if it is free.
func (m *ctxMutex) TryLock() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked {
		return false
	}
	m.locked = true
	return true
}

// Unlock releases the mutex and wakes whoever waits for it.
func (m *ctxMutex) Unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.locked {
		panic("session: unlock of an unlocked ctxMutex")
	}
	m.locked = false
	if m.wait != nil {
		close(m.wait)
		m.wait = nil
	}
}
