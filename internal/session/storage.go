package session

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tasksessiond/tasksessiond"
)

// isLeaseError reports whether err says this daemon no longer holds a
// session's lease (or, a newer daemon having migrated the database, is
// giving it up): whatever the call, its copy in memory must go.
func isLeaseError(err error) bool {
	var held *tasksessiond.LeaseHeldError
	return errors.As(err, &held) || errors.Is(err, tasksessiond.ErrLeaseExpired) || errors.Is(err, tasksessiond.ErrNewerSchema)
}

// leaseTimeout bounds giving a lease up: a database that does not answer
// must not hold a session's lock for long (the lease then expires).
const leaseTimeout = 2 * time.Second

// takeLease acquires s's lease when the storage has leases.
func (m *Manager) takeLease(ctx context.Context, id string) error {
	if m.leases == nil {
		return nil
	}
	err := m.leases.Acquire(ctx, id)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tasksessiond.ErrNotFound):
		return tasksessiond.Errorf(tasksessiond.KindNotFound, "session %q not found: create it with sessions/create, or check the id with sessions/list", id)
	}
	return unavailable("leasing session "+id, err)
}

// confirmLease makes sure this daemon still holds s's lease before s is
// answered for from memory. A lost lease drops s (the caller looks again);
// the error is then nil and lost true.
func (m *Manager) confirmLease(ctx context.Context, s *session) (lost bool, err error) {
	if m.leases == nil {
		return false, nil
	}
	err = m.leases.Confirm(ctx, s.id)
	switch {
	case err == nil:
		return false, nil
	case isLeaseError(err):
		m.log.Warn("lease lost; session dropped from memory", slog.String(keySession, s.id), slog.Any("err", err))
		m.lose(s, err)
		return true, nil
	}
	return false, unavailable("confirming the lease of session "+s.id, err)
}

// giveLease releases id's lease when the storage has leases. The caller
// has dropped the session from memory.
func (m *Manager) giveLease(id string) {
	if m.leases == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
	defer cancel()
	m.leases.Release(ctx, id)
}

// lostLease forgets a session whose lease was lost (not renewed in time,
// or taken over): its memory may no longer equal the log.
func (m *Manager) lostLease(id string) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if !ok {
		return
	}
	// Not under the renewer's feet: a call holding the session finishes
	// first (its append fails, fenced, if it writes; it confirms the lease
	// before it answers from memory).
	go func() {
		if err := s.mu.Lock(context.Background()); err != nil {
			return
		}
		defer s.mu.Unlock()
		if !s.dead {
			m.log.Warn("lease lost; session dropped from memory", slog.String(keySession, id))
			m.lose(s, tasksessiond.ErrLeaseExpired)
		}
	}()
}

// lose drops s, whose lease this daemon lost, from memory. s is locked.
func (m *Manager) lose(s *session, err error) {
	m.drop(s)
	m.endWatches(s.id, nil, "session "+s.id+" is no longer served by this daemon: its lease was lost (another daemon took it over, or this one could not renew it in time); this daemon no longer sees its changes: watch it at the daemon that serves it now")
}
