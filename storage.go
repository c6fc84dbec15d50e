package tasksessiond

import (
	"context"
	"time"
)

// Storage is what the session manager keeps sessions in: internal/db's
// *DB (SQLite, one daemon) and internal/pgdb's *DB (PostgreSQL, a fleet
// of daemons). Both return this package's errors (ErrNotFound, ErrExists,
// ErrSealed, ErrBadCursor, ErrVanished) with the same meaning, so the
// manager branches once.
type Storage interface {
	Source

	CreateSession(ctx context.Context, s *Session) error
	GetSession(ctx context.Context, id string) (Session, error)
	Head(ctx context.Context, id string) (string, error)
	ListSessions(ctx context.Context, f ListFilter) ([]Session, string, error)
	CountSessions(ctx context.Context) (int, error)
	Messages(ctx context.Context, sessionID string) ([]Message, error)

	// AppendCalls logs calls, returning once they have committed (setting
	// each Call's CreatedAt); nothing of a failed request is written.
	AppendCalls(ctx context.Context, appends []Append) error
	CallBySeq(ctx context.Context, sessionID string, seq int64) (Call, error)
	FindCall(ctx context.Context, sessions []string, callID string) (sessionID string, seq int64, found bool, err error)
	// Compact writes a compaction in one transaction; ErrSealed if the
	// old session already was, ErrExists if the new id is taken.
	Compact(ctx context.Context, c Compaction) error

	WAL() WAL
	// Problem says what is wrong with the database as a whole, "" when
	// nothing is (daemon/status).
	Problem() string
}

// Source is what a session is replayed from: its record and its log.
type Source interface {
	LoadSession(ctx context.Context, id string) (Session, error)
	EachCall(ctx context.Context, sessionID string, fn func(*Call) error) error
}

// ListFilter selects sessions for ListSessions; it is also the params of
// sessions/list.
type ListFilter struct {
	Status string `json:"status,omitempty"` // SessionActive or SessionCompacted; "" for both
	Limit  int    `json:"limit,omitempty"`  // 1..1000; default 50
	Cursor string `json:"cursor,omitempty"` // a previous page's next cursor, as it came
}

// WAL is SQLite's write-ahead log as the daemon's last checkpoint found it.
type WAL struct {
	Bytes        int64 `json:"bytes"`        // the -wal file's size
	Frames       int   `json:"frames"`       // frames in the log
	Checkpointed int   `json:"checkpointed"` // of which copied back into the database
}

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
	// when a live daemon elsewhere holds it, ErrNotFound when there is
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
	Source
	Messages(ctx context.Context, sessionID string) ([]Message, error)
}

// ConsistentReader is implemented by a storage with leases: fn reads from
// one consistent view of the database, without taking any lease, so that
// a daemon that does not serve a session can still show it.
type ConsistentReader interface {
	ReadConsistent(ctx context.Context, fn func(ReadSource) error) error
}
