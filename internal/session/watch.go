package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The ops of a wire.Event.
const (
	OpCreate    = "create"
	OpUpdate    = "update"
	OpCompacted = "compacted"
	// OpEnded is the last event of a watch, with a Message saying why:
	// in fleet mode, this daemon no longer serves the session.
	OpEnded = "ended"
)

// Watcher receives a session's events. Send must not block: it is called
// with the session locked, so that events arrive in commit order.
type Watcher interface {
	Send(wire.Event)
}

type watchers struct {
	mu  sync.Mutex
	by  map[string]map[Watcher]struct{}
	all map[Watcher]struct{} // every session's events (a board)
}

// Watch subscribes w to a session's events until the returned cancel is
// called. The session must exist.
func (m *Manager) Watch(ctx context.Context, id string, w Watcher) (cancel func(), err error) {
	if m.leases != nil {
		return m.watchFleet(ctx, id, w)
	}
	s, err := m.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	defer s.release()
	return m.subscribe(id, w), nil
}

func (m *Manager) subscribe(id string, w Watcher) (cancel func()) {
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
	}
}

// watchFleet subscribes w to a session in fleet mode, where only the
// daemon serving a session sees its changes. Watching takes no lease: a
// session another daemon serves is refused (-32006: watch it there); one
// nobody serves is watched here, and the watch is ended, with a reason,
// as soon as another daemon serves it (checked every third of a lease) or
// this daemon loses its lease (at once).
func (m *Manager) watchFleet(ctx context.Context, id string, w Watcher) (cancel func(), err error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	if _, err := m.db.GetSession(ctx, id); errors.Is(err, tasksessiond.ErrNotFound) {
		return nil, tasksessiond.Errorf(tasksessiond.KindNotFound, "session %q not found: create it with sessions/create, or check the id with sessions/list", id)
	} else if err != nil {
		return nil, unavailable("watching session "+id, err)
	}
	m.mu.Lock()
	s, here := m.sessions[id]
	m.mu.Unlock()
	if here {
		// Subscribed under the session's lock, so that the watch sees every
		// change after it and none before.
		if err := s.mu.Lock(ctx); err != nil {
			return nil, err
		}
		defer s.mu.Unlock()
	} else {
		held, err := m.leases.Holder(ctx, id)
		if err != nil {
			return nil, unavailable("watching session "+id, err)
		}
		if held != nil {
			return nil, unavailable("watching session "+id, held)
		}
	}
	unsubscribe := m.subscribe(id, w)
	stop := make(chan struct{})
	go m.follow(id, w, stop)
	var once sync.Once
	return func() {
		once.Do(func() { close(stop) })
		unsubscribe()
	}, nil
}

// follow ends w's watch of id once another daemon serves the session.
func (m *Manager) follow(id string, w Watcher, stop <-chan struct{}) {
	t := time.NewTicker(max(m.leases.Lease()/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		_, here := m.sessions[id]
		m.mu.Unlock()
		if here {
			continue // served here (a lost lease ends the watch at once)
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.leases.Lease())
		held, err := m.leases.Holder(ctx, id)
		cancel()
		if err == nil && held != nil {
			m.endWatches(id, w, fmt.Sprintf("session %s is now served by another daemon (%s); this daemon no longer sees its changes: watch it at that daemon", id, held.Owner))
			return
		}
	}
}

// endWatches ends the watches of a session (only w's when w is not nil)
// with a last OpEnded event saying why.
func (m *Manager) endWatches(id string, w Watcher, why string) {
	m.watch.mu.Lock()
	defer m.watch.mu.Unlock()
	for x := range m.watch.by[id] {
		if w != nil && x != w {
			continue
		}
		delete(m.watch.by[id], x)
		x.Send(wire.Event{SessionID: id, Op: OpEnded, Message: why})
	}
	if len(m.watch.by[id]) == 0 {
		delete(m.watch.by, id)
	}
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
func (m *Manager) notify(e wire.Event) {
	m.watch.mu.Lock()
	defer m.watch.mu.Unlock()
	for w := range m.watch.by[e.SessionID] {
		w.Send(e)
	}
	for w := range m.watch.all {
		w.Send(e)
	}
}
