package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// DefaultWatchBuffer is how many events a connection may fall behind by
// before its watch is dropped (with a notice), so a slow reader never holds
// up a session.
const DefaultWatchBuffer = 1024

// watcher forwards a session's events to one connection.
type watcher struct {
	c       *conn
	session string
	events  chan wire.Event
	dropped bool // Send calls are serialised by the manager
	cancel  func()
}

// Send queues e without blocking; a watcher that has fallen too far behind
// is dropped.
func (w *watcher) Send(e wire.Event) {
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

// run hands the queued events to the connection's writer until it closes.
// A watcher that fell too far behind gets a watchLagged notice, and its
// connection is closed once what is queued has been sent: the peer learns
// plainly that it missed events, and the session never waited for it.
func (w *watcher) run(done <-chan struct{}) {
	for {
		select {
		case e, ok := <-w.events:
			if !ok {
				w.c.srv.log.Info("watcher fell behind; closing its connection", slog.String("session", w.session), slog.Int("buffer", cap(w.events)))
				w.c.notify(wire.NotifyWatchLagged, wire.Event{SessionID: w.session,
					Message: fmt.Sprintf("this connection fell more than %d changes behind and is closed; reconnect, call sessions/watch again and sessions/resume for the current list", cap(w.events))})
				w.cancel()
				w.c.closeAfterFlush()
				return
			}
			method := wire.NotifyTasksChanged
			switch e.Op {
			case session.OpCompacted:
				method = wire.NotifySessionCompacted
			case session.OpEnded:
				// The last event of this watch (fleet mode: served elsewhere
				// now); the connection stays open for the rest.
				w.c.srv.log.Info("watch ended", slog.String("session", w.session), slog.String("why", e.Message))
				w.c.notify(wire.NotifyWatchEnded, e)
				w.cancel()
				return
			}
			if !w.c.notify(method, e) {
				return
			}
		case <-done:
			return
		}
	}
}

// watch is sessions/watch, which needs its connection.
func (s *Server) watch(ctx context.Context, c *conn, p wire.SessionRef) (any, error) {
	if err := c.canWatch(p.SessionID); err != nil {
		return nil, err
	}
	if c.watching(p.SessionID) {
		return struct{}{}, nil // one subscription, however often asked
	}
	w := &watcher{c: c, session: p.SessionID, events: make(chan wire.Event, s.cfg.WatchBuffer)}
	cancel, err := s.mgr.Watch(ctx, p.SessionID, w)
	if err != nil {
		return nil, err
	}
	w.cancel = cancel
	c.addWatch(p.SessionID, cancel)
	go w.run(c.dead)
	return struct{}{}, nil
}

// Watching returns how many subscriptions (sessions/watch and
// sessions/watchAll) the server's connections hold.
func (s *Server) Watching() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		c.mu.Lock()
		n += len(c.watches)
		c.mu.Unlock()
	}
	return n
}

// notify queues a notification; false when the connection is gone.
func (c *conn) notify(method string, params any) bool {
	return c.send(jsonrpc.Notification{JSONRPC: "2.0", Method: method, Params: params})
}

// watchAllKey is sessions/watchAll's key among a connection's watches.
const watchAllKey = "\x00all"

// watching reports whether the connection already watches key.
func (c *conn) watching(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.watches[key]
	return ok
}

// canWatch refuses a new watch past the connection's bound; one it
// already has is no new watch.
func (c *conn) canWatch(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.watches[key]; ok || len(c.watches) < c.srv.cfg.MaxWatches {
		return nil
	}
	return jsonrpc.Errorf(wire.CodeInvalidRequest,
		"invalid request: this connection already watches %d sessions, the most one may; nothing was done: "+
			"watch every session with one sessions/watchAll, or open another connection", len(c.watches))
}

func (c *conn) addWatch(key string, cancel func()) {
	c.mu.Lock()
	if c.watches == nil {
		c.watches = map[string]func(){}
	}
	c.watches[key] = cancel
	c.mu.Unlock()
}

// endWatches unsubscribes the connection's watches when it closes.
func (c *conn) endWatches() {
	c.mu.Lock()
	ws := c.watches
	c.watches = nil
	c.mu.Unlock()
	for _, cancel := range ws {
		cancel()
	}
}
