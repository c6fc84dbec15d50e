package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Storage is what the manager keeps sessions in: package db's *DB
// (SQLite, one daemon) and package pgdb's *DB (PostgreSQL, a fleet of
// daemons). Both return db's errors (ErrNotFound, ErrExists, ErrSealed,
// ErrBadCursor) with the same meaning, so the manager branches once.
type Storage interface {
	// LoadSession and EachCall are what replay reads a session from.
	LoadSession(ctx context.Context, id string) (record.Session, error)
	EachCall(ctx context.Context, sessionID string, fn func(*record.Call) error) error

	CreateSession(ctx context.Context, s *record.Session) error
	GetSession(ctx context.Context, id string) (record.Session, error)
	Head(ctx context.Context, id string) (string, error)
	ListSessions(ctx context.Context, f db.ListFilter) ([]record.Session, string, error)
	CountSessions(ctx context.Context) (int, error)
	TaskCounts(ctx context.Context, sessionID string) (store.Counts, error)
	TaskCountsOf(ctx context.Context, ids []string) (map[string]store.Counts, error)
	Messages(ctx context.Context, sessionID string) ([]record.Message, error)

	// AppendCalls logs calls, returning once they have committed (setting
	// each Call's CreatedAt); nothing of a failed request is written.
	AppendCalls(ctx context.Context, appends []record.Append) error
	CallBySeq(ctx context.Context, sessionID string, seq int64) (record.Call, error)
	FindCall(ctx context.Context, sessions []string, callID string) (sessionID string, seq int64, found bool, err error)
	// Compact writes a compaction in one transaction; ErrSealed if the
	// old session already was, ErrExists if the new id is taken.
	Compact(ctx context.Context, c record.Compaction) error

	WAL() db.WALStats
	// Problem says what is wrong with the database as a whole, "" when
	// nothing is (daemon/status).
	Problem() string
}

var _ Storage = (*db.DB)(nil)

// Leaser is implemented by a storage that several daemons share: a
// session is served by one daemon at a time, the one holding its lease.
// The manager takes the lease before it loads a session (so that the
// replay sees everything the previous holder committed) and gives it up
// when it drops the session from memory. The storage renews what it
// holds, refuses appends to a session whose lease it no longer holds, and
// calls the function given to OnLost when a lease is lost, so that the
// manager forgets that session (another daemon may be writing it now).
type Leaser interface {
	// Acquire takes or renews the lease of a session; a *LeaseHeldError
	// when a live daemon elsewhere holds it, db.ErrNotFound when there is
	// no such session.
	Acquire(ctx context.Context, sessionID string) error
	// Confirm makes sure, before the manager answers for a session from
	// memory, that this daemon still holds its lease: at once while its
	// own monotonic clock says the lease is valid with a margin, else by
	// renewing it in the database, which proves nobody took it meanwhile.
	// A *LeaseHeldError or ErrLeaseExpired when the lease is lost (the
	// manager drops the session), another error when it could not tell.
	Confirm(ctx context.Context, sessionID string) error
	// Release gives the lease up, if this daemon holds it.
	Release(ctx context.Context, sessionID string)
	OnLost(func(sessionID string))
	// Holder is who holds a session's live lease when another daemon
	// does; nil when this daemon or nobody does.
	Holder(ctx context.Context, sessionID string) (*LeaseHeldError, error)

	Owner() string        // this daemon as a lease holder: id, host and pid
	Held() int            // how many leases it holds
	Lease() time.Duration // how long a lease lasts unless renewed
}

// ReadSource is what a consistent read of one session reads.
type ReadSource interface {
	replay.Source
	Messages(ctx context.Context, sessionID string) ([]record.Message, error)
}

// ConsistentReader is implemented by a storage with leases: fn reads from
// one consistent view of the database, without taking any lease, so that
// a daemon that does not serve a session can still show it.
type ConsistentReader interface {
	ReadConsistent(ctx context.Context, fn func(ReadSource) error) error
}

// ErrLeaseExpired is an append or a confirmation by a daemon whose lease
// ran out (it could not renew in time) with no other daemon holding the
// session yet: memory may be stale, so the manager drops the session.
var ErrLeaseExpired = errors.New("this daemon's lease on the session has expired")

// isLeaseError reports whether err says this daemon no longer holds a
// session's lease: whatever the call, its copy in memory must go.
func isLeaseError(err error) bool {
	var held *LeaseHeldError
	return errors.As(err, &held) || errors.Is(err, ErrLeaseExpired)
}

// LeaseHeldError is a session served by another daemon. Appends return
// it too, from a daemon that has lost the lease (fencing).
type LeaseHeldError struct {
	SessionID string
	Owner     string // the holder's id, host and pid
	ExpiresAt time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("session %s is served by another daemon (%s) until its lease expires at %s",
		e.SessionID, e.Owner, e.ExpiresAt.UTC().Format(time.RFC3339Nano))
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
	case errors.Is(err, db.ErrNotFound):
		return errorf(wire.CodeSessionNotFound, "session %q not found: create it with sessions/create, or check the id with sessions/list", id)
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
			m.lose(s, ErrLeaseExpired)
		}
	}()
}

// lose drops s, whose lease this daemon lost, from memory. s is locked.
func (m *Manager) lose(s *session, err error) {
	m.drop(s)
	m.endWatches(s.id, nil, "session "+s.id+" is no longer served by this daemon: its lease was lost (another daemon took it over, or this one could not renew it in time); this daemon no longer sees its changes: watch it at the daemon that serves it now")
}
