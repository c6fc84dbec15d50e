package server

import (
	"context"

	"github.com/tasksessiond/tasksessiond/wire"
)

// watchAll subscribes the connection to every session's events
// (the board's one subscription, instead of one per session). The events
// are those of sessions/watch, and a watcher that falls behind is dropped
// the same way, with a watchLagged notice whose sessionId is empty.
func (s *Server) watchAll(_ context.Context, c *conn, _ struct{}) (any, error) {
	if err := c.canWatch(watchAllKey); err != nil {
		return nil, err
	}
	if c.watching(watchAllKey) {
		return struct{}{}, nil // one subscription, however often asked
	}
	w := &watcher{c: c, events: make(chan wire.Event, s.cfg.WatchBuffer)}
	w.cancel = s.mgr.WatchAll(w)
	c.addWatch(watchAllKey, w.cancel)
	go w.run(c.dead)
	return struct{}{}, nil
}
