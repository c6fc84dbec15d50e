package server

import (
	"context"
	"encoding/json"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// Notification methods sent to watchers.
const (
	methodTasksChanged     = "notifications/tasks/changed"
	methodSessionCompacted = "notifications/sessions/compacted"
	methodWatchLagged      = "notifications/sessions/watchLagged"
)

// watchBuffer is how many events a connection may fall behind by before
// its watch is dropped (with a notice), so a slow reader never holds up a session.
const watchBuffer = 1024

// watcher forwards a session's events to one connection.
type watcher struct {
	c       *conn
	session string
	events  chan session.Event
	dropped bool // Send calls are serialised by the manager
	cancel  func()
}

// Send queues e without blocking; a watcher that has fallen too far behind
// is dropped.
func (w *watcher) Send(e session.Event) {
	if w.dropped {
		return
	}
	select {
	case w.events <- e:
	default:
		w.dropped = true
		close(w.events)
	}
}

// run writes the queued events to the connection until it closes.
func (w *watcher) run(done <-chan struct{}) {
	for {
		select {
		case e, ok := <-w.events:
			if !ok {
				w.c.notify(methodWatchLagged, map[string]any{"sessionId": w.session,
					"message": "this connection fell too far behind; call sessions/watch again (and sessions/resume for the current list)"})
				w.cancel()
				return
			}
			method := methodTasksChanged
			if e.Op == session.OpCompacted {
				method = methodSessionCompacted
			}
			w.c.notify(method, e)
		case <-done:
			return
		}
	}
}

// sessionsWatch needs its connection, so it decodes its params itself.
func (s *Server) sessionsWatch(method string) handler {
	return func(ctx context.Context, c *conn, params json.RawMessage) (any, error) {
		var p sessionParams
		if err := decode(method, params, &p); err != nil {
			return nil, err
		}
		return s.watch(ctx, c, p)
	}
}

func (s *Server) watch(ctx context.Context, c *conn, p sessionParams) (any, error) {
	w := &watcher{c: c, session: p.SessionID, events: make(chan session.Event, watchBuffer)}
	cancel, err := s.mgr.Watch(ctx, p.SessionID, w)
	if err != nil {
		return nil, err
	}
	w.cancel = cancel
	c.addWatch(cancel)
	go w.run(c.ctx.Done())
	return struct{}{}, nil
}

// notify writes a notification and flushes it.
func (c *conn) notify(method string, params any) {
	c.write(jsonrpc.Notification{JSONRPC: "2.0", Method: method, Params: params})
	c.flush()
}

func (c *conn) addWatch(cancel func()) {
	c.wmu.Lock()
	c.watches = append(c.watches, cancel)
	c.wmu.Unlock()
}

// endWatches unsubscribes the connection's watches when it closes.
func (c *conn) endWatches() {
	c.wmu.Lock()
	ws := c.watches
	c.watches = nil
	c.wmu.Unlock()
	for _, cancel := range ws {
		cancel()
	}
}
