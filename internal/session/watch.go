package session

import (
	"context"
	"sync"

	"github.com/tasksessiond/tasksessiond/wire"
)

// Event is a committed change to a session, for watchers.
type Event = wire.Event

// Event ops.
const (
	OpCreate    = "create"
	OpUpdate    = "update"
	OpCompacted = "compacted"
)

// Watcher receives a session's events. Send must not block: it is called
// with the session locked, so that events arrive in commit order.
type Watcher interface {
	Send(Event)
}

type watchers struct {
	mu  sync.Mutex
	by  map[string]map[Watcher]struct{}
	all map[Watcher]struct{} // every session's events (a board)
}

// Watch subscribes w to a session's events until the returned cancel is
// called. The session must exist.
func (m *Manager) Watch(ctx context.Context, id string, w Watcher) (cancel func(), err error) {
	s, err := m.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	defer s.release()
	m.watch.mu.Lock()
	if m.watch.by == nil {
		m.watch.by = map[string]map[Watcher]struct{}{}
	}
	if m.watch.by[id] == nil {
		m.watch.by[id] = map[Watcher]struct{}{}
	}
	m.watch.by[id][w] = struct{}{}
	m.watch.mu.Unlock()
	return func() {
		m.watch.mu.Lock()
		delete(m.watch.by[id], w)
		if len(m.watch.by[id]) == 0 {
			delete(m.watch.by, id)
		}
		m.watch.mu.Unlock()
	}, nil
}

// WatchAll subscribes w to the events of every session, those created
// later included, until the returned cancel is called. One subscription
// instead of one per session keeps a board of hundreds of sessions cheap.
// Each session's events reach w in commit order; events of different
// sessions interleave as they commit.
func (m *Manager) WatchAll(w Watcher) (cancel func()) {
	m.watch.mu.Lock()
	if m.watch.all == nil {
		m.watch.all = map[Watcher]struct{}{}
	}
	m.watch.all[w] = struct{}{}
	m.watch.mu.Unlock()
	return func() {
		m.watch.mu.Lock()
		delete(m.watch.all, w)
		m.watch.mu.Unlock()
	}
}

// notify sends e to the session's watchers and to those of every session.
// The caller holds the session's lock.
func (m *Manager) notify(e Event) {
	m.watch.mu.Lock()
	defer m.watch.mu.Unlock()
	for w := range m.watch.by[e.SessionID] {
		w.Send(e)
	}
	for w := range m.watch.all {
		w.Send(e)
	}
}
