package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// Leases: a session is served by the daemon whose row in leases names it
// and has not expired, by the database's clock (the daemons' clocks never
// compare). The holder renews its leases every third of the lease; every
// append checks in its own transaction that the lease is still its own
// (insertFencedSQL), so a daemon that lost one cannot write that session.

var _ session.Leaser = (*DB)(nil)

// ErrLeaseExpired is an append by a daemon whose lease ran out (it could
// not renew in time) with no other daemon holding the session yet; the
// manager drops the session and takes the lease afresh on its next use.
var ErrLeaseExpired = errors.New("this daemon's lease on the session has expired")

// acquireSQL takes the lease when it is free, expired or already ours.
// ON CONFLICT locks the row, so two daemons racing for one session are
// serialised and exactly one wins. Parameters: session_id, owner,
// owner_info, lease in microseconds.
const acquireSQL = `INSERT INTO leases (session_id, owner, owner_info, expires_at)
	VALUES ($1, $2, $3, clock_timestamp() + $4::bigint * interval '1 microsecond')
	ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, owner_info = excluded.owner_info, expires_at = excluded.expires_at
	WHERE leases.owner = excluded.owner OR leases.expires_at <= clock_timestamp()
	RETURNING owner`

// Acquire takes or renews the lease of a session for this daemon.
func (d *DB) Acquire(ctx context.Context, sessionID string) error {
	for try := 0; ; try++ {
		var owner string
		err := d.x.GetContext(ctx, &owner, acquireSQL, sessionID, d.owner, d.ownerInfo, d.lease.Microseconds())
		switch {
		case errors.Is(err, sql.ErrNoRows):
			err := d.fenced(ctx, sessionID)
			if errors.Is(err, ErrLeaseExpired) && try < 2 {
				continue // the holder's lease ran out between the two statements: take it
			}
			return err
		case pgCode(err) == foreignKeyViolation:
			return fmt.Errorf("lease session %s: %w", sessionID, errNotFound)
		case err != nil:
			return fmt.Errorf("lease session %s: %w", sessionID, err)
		}
		d.hold(sessionID)
		return nil
	}
}

// fenced says why this daemon may not write a session: who holds its
// lease, or that this daemon's own has expired.
func (d *DB) fenced(ctx context.Context, sessionID string) error {
	var status string
	if err := d.x.GetContext(ctx, &status, `SELECT status FROM sessions WHERE id = $1`, sessionID); err == nil && status != record.StatusActive {
		return fmt.Errorf("session %s: %w", sessionID, db.ErrSealed)
	}
	d.mu.Lock()
	delete(d.held, sessionID)
	d.mu.Unlock()
	var r struct {
		Owner     string    `db:"owner"`
		Info      string    `db:"owner_info"`
		ExpiresAt time.Time `db:"expires_at"`
	}
	err := d.x.GetContext(ctx, &r, `SELECT owner, owner_info, expires_at FROM leases WHERE session_id = $1 AND expires_at > clock_timestamp()`, sessionID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("session %s: %w", sessionID, ErrLeaseExpired)
	case err != nil:
		return fmt.Errorf("session %s: who holds the lease: %w", sessionID, err)
	case r.Owner == d.owner:
		// Ours again meanwhile (a renewal raced this): a retry writes.
		return fmt.Errorf("session %s: %w", sessionID, ErrLeaseExpired)
	}
	return &session.LeaseHeldError{SessionID: sessionID, Owner: r.Info, ExpiresAt: r.ExpiresAt.UTC()}
}

// Release gives up the lease of a session, if this daemon holds it.
func (d *DB) Release(ctx context.Context, sessionID string) {
	d.mu.Lock()
	_, mine := d.held[sessionID]
	delete(d.held, sessionID)
	d.mu.Unlock()
	if !mine {
		return
	}
	if _, err := d.x.ExecContext(ctx, `DELETE FROM leases WHERE session_id = $1 AND owner = $2`, sessionID, d.owner); err != nil {
		d.log.Warn("could not give up a lease; it expires on its own", slog.String("session", sessionID), slog.Any("err", err))
	}
}

// OnLost sets what is called (from the renewer's goroutine) for each
// session whose lease this daemon lost.
func (d *DB) OnLost(fn func(sessionID string)) {
	d.mu.Lock()
	d.onLost = fn
	d.mu.Unlock()
}

func (d *DB) hold(sessionID string) {
	d.mu.Lock()
	d.held[sessionID] = struct{}{}
	d.mu.Unlock()
}

// Held is how many leases this daemon holds.
func (d *DB) Held() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.held)
}

// renewer renews this daemon's leases every third of the lease, and
// reports the ones it lost: taken over, or not renewed within a lease
// (the database was unreachable that long).
func (d *DB) renewer() {
	defer close(d.done)
	t := time.NewTicker(d.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-d.closed:
			return
		case <-t.C:
			d.renew()
		}
	}
}

func (d *DB) renew() {
	d.mu.Lock()
	ids := make([]string, 0, len(d.held))
	for id := range d.held {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	if len(ids) == 0 {
		d.mu.Lock()
		d.renewed = time.Now()
		d.mu.Unlock()
		return
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), d.lease/3)
	defer cancel()
	var kept []string
	err := d.x.SelectContext(ctx, &kept, `UPDATE leases SET expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond'
		WHERE owner = $1 AND session_id = ANY($2) AND expires_at > clock_timestamp() RETURNING session_id`,
		d.owner, ids, d.lease.Microseconds())
	var lost []string
	d.mu.Lock()
	if err != nil {
		if time.Since(d.renewed) < d.lease {
			d.mu.Unlock()
			d.log.Warn("renewing leases failed; retrying", slog.Int("leases", len(ids)), slog.Any("err", err))
			return
		}
		// Not renewed for a whole lease: another daemon may serve these
		// sessions by now.
		lost = ids
	} else {
		d.renewed = began
		ok := make(map[string]bool, len(kept))
		for _, id := range kept {
			ok[id] = true
		}
		for _, id := range ids {
			if !ok[id] {
				lost = append(lost, id)
			}
		}
	}
	for _, id := range lost {
		delete(d.held, id)
	}
	fn := d.onLost
	d.mu.Unlock()
	if len(lost) > 0 {
		d.log.Warn("leases lost", slog.Int("sessions", len(lost)), slog.Any("err", err))
	}
	if fn != nil {
		for _, id := range lost {
			fn(id)
		}
	}
}
