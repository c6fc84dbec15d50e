package session

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"time"
)

// Defaults for keeping sessions in memory. An evicted session is replayed
// from the database on its next use, transparently.
const (
	DefaultMaxLoaded   = 10_000
	DefaultIdleTimeout = 30 * time.Minute
)

// SetMaxLoaded sets how many sessions stay in memory (at least 1).
func (m *Manager) SetMaxLoaded(n int) {
	m.mu.Lock()
	m.maxLoaded = max(n, 1)
	m.mu.Unlock()
}

// EvictIdle drops from memory the sessions unused for longer than idle and
// returns how many it dropped. A session in use is left alone.
func (m *Manager) EvictIdle(idle time.Duration) int {
	cutoff := m.now().Add(-idle).UnixNano()
	m.mu.Lock()
	candidates := make([]*session, 0, len(m.sessions))
	for _, s := range m.sessions {
		candidates = append(candidates, s)
	}
	m.mu.Unlock()
	n := 0
	for _, s := range candidates {
		if m.tryEvict(s, func(s *session) bool { return s.lastUsed.Load() < cutoff }) {
			n++
		}
	}
	if n > 0 {
		m.log.Info("evicted idle sessions", slog.Int("sessions", n), slog.Duration("idle", idle))
	}
	return n
}

// RunEvictor evicts idle sessions every idle/4 until ctx ends.
func (m *Manager) RunEvictor(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(max(idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.EvictIdle(idle)
		}
	}
}

// evictOverCap drops the least recently used sessions once the cap is
// passed, sparing keep (just loaded, and locked by the caller). It goes down
// to 90% of the cap, so that at the cap the sort is paid once per many
// loads, not on every one.
func (m *Manager) evictOverCap(keep *session) {
	m.mu.Lock()
	if len(m.sessions) <= m.maxLoaded {
		m.mu.Unlock()
		return
	}
	over := len(m.sessions) - m.maxLoaded*9/10
	candidates := make([]*session, 0, len(m.sessions))
	for _, s := range m.sessions {
		if s != keep {
			candidates = append(candidates, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(candidates, func(a, b *session) int { return cmp.Compare(a.lastUsed.Load(), b.lastUsed.Load()) })
	for _, s := range candidates {
		if over == 0 {
			return
		}
		if m.tryEvict(s, func(*session) bool { return true }) {
			over--
		}
	}
}

// tryEvict drops s if it is idle (not locked) and ok says so.
func (m *Manager) tryEvict(s *session, ok func(*session) bool) bool {
	if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.dead || !s.loaded || !ok(s) {
		return false
	}
	m.drop(s)
	return true
}
