package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tasksessiond/tasksessiond"
)

// Leases: a session is served by the daemon whose row in leases names it
// and has not expired, by the database's clock (the daemons' clocks never
// compare). The holder renews its leases every third of the lease; every
// append checks in its own transaction that the lease is still its own
// (insertFencedSQL), so a daemon that lost one cannot write that session.

var _ tasksessiond.Leaser = (*DB)(nil)

// acquireSQL takes the lease when it is free, expired or already ours.
// ON CONFLICT locks the row, so two daemons racing for one session are
// serialised and exactly one wins. Parameters: session_id, owner,
// owner_info, lease in microseconds.
const acquireSQL = `INSERT INTO leases (session_id, owner, owner_info, expires_at)
	VALUES ($1, $2, $3, clock_timestamp() + $4::bigint * interval '1 microsecond')
	ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, owner_info = excluded.owner_info, expires_at = excluded.expires_at
	WHERE leases.owner = excluded.owner OR leases.expires_at <= clock_timestamp()
	RETURNING owner`

// Acquire takes or renews the lease of a session for this daemon. It
// waits at most about one lease: a holder frozen with the lease row
// locked must not hold up a takeover for longer (the statement's
// lock_timeout and statement_timeout bound it on the server too).
func (d *DB) Acquire(ctx context.Context, sessionID string) error {
	if e := d.newer.Load(); e != nil {
		return fmt.Errorf("lease session %s: %w", sessionID, e)
	}
	ctx, cancel := context.WithTimeout(ctx, d.wait(d.lease))
	defer cancel()
	for try := 0; ; try++ {
		var owner string
		began := time.Now()
		err := d.x.GetContext(ctx, &owner, acquireSQL, sessionID, d.owner, d.ownerInfo, d.lease.Microseconds())
		switch {
		case errors.Is(err, sql.ErrNoRows):
			err := d.fenced(ctx, sessionID)
			if errors.Is(err, tasksessiond.ErrLeaseExpired) && try < 2 {
				continue // the holder's lease ran out between the two statements: take it
			}
			return err
		case pgCode(err) == foreignKeyViolation:
			return fmt.Errorf("lease session %s: %w", sessionID, tasksessiond.ErrNotFound)
		case err != nil:
			return fmt.Errorf("lease session %s: %w", sessionID, err)
		}
		d.hold(sessionID, began)
		return nil
	}
}

// confirmSQL renews a lease only if this daemon still owns its row,
// expired or not: no other daemon can have written the session without
// taking the row (a takeover sets owner), so a row still ours proves that
// memory still equals the log. Parameters: session_id, owner, lease in
// microseconds.
const confirmSQL = `UPDATE leases SET expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond'
	WHERE session_id = $1 AND owner = $2 RETURNING session_id`

// Valid reports whether this daemon may answer for a session from memory
// without asking the database: its own monotonic clock says the lease,
// as last taken or renewed, still has more than a third of its length to
// run. The lease was set to expire a lease after a moment later than the
// one the daemon noted before asking, by the database's clock; so while
// the daemon's clock is within a lease of that note, no other daemon can
// have taken the session (clock rates assumed alike to within the margin).
func (d *DB) Valid(sessionID string) bool {
	d.mu.Lock()
	since, ok := d.held[sessionID]
	d.mu.Unlock()
	return ok && time.Since(since) < d.lease-d.margin()
}

// wait bounds one of the daemon's own waits on the database: at least d,
// and at least two seconds, which a new connection to a loaded server can
// take (the server's lock_timeout bounds a wait on a lock to half a lease
// whatever this says).
func (d *DB) wait(x time.Duration) time.Duration { return max(x, 2*time.Second) }

// margin is how much of a lease the daemon does not count on: a third.
// The renewer renews every third, so normally a lease is confirmed in
// memory; one that is not (the daemon was paused, or the database slow)
// is confirmed by a round trip first.
func (d *DB) margin() time.Duration { return d.lease / 3 }

// Confirm makes sure this daemon still holds a session's lease before it
// answers from memory: at once when Valid, else by renewing it (confirmSQL)
// within a bounded wait. When the lease is lost, the session is no longer
// held and the error says who holds it (*tasksessiond.LeaseHeldError) or that
// the lease was lost (tasksessiond.ErrLeaseExpired); the caller drops the session.
func (d *DB) Confirm(ctx context.Context, sessionID string) error {
	if e := d.newer.Load(); e != nil {
		// Still held: the renewer gives it up and reports it lost.
		return fmt.Errorf("session %s: %w", sessionID, e)
	}
	if d.Valid(sessionID) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.wait(d.lease/3))
	defer cancel()
	began := time.Now()
	var id string
	err := d.x.GetContext(ctx, &id, confirmSQL, sessionID, d.owner, d.lease.Microseconds())
	switch {
	case errors.Is(err, sql.ErrNoRows):
		d.unhold(sessionID)
		return d.fenced(ctx, sessionID)
	case err != nil:
		d.mu.Lock()
		since, ok := d.held[sessionID]
		d.mu.Unlock()
		if ok && time.Since(since) < d.lease {
			// Not confirmed, but still ours for sure: the caller may not
			// answer from memory (the margin is spent) and says so.
			return fmt.Errorf("confirm the lease of session %s: %w", sessionID, err)
		}
		d.unhold(sessionID)
		return fmt.Errorf("session %s: %w (not renewed for a whole lease: %w)", sessionID, tasksessiond.ErrLeaseExpired, err)
	}
	d.hold(sessionID, began)
	return nil
}

// fenced says why this daemon may not write a session: a newer daemon
// migrated the database (schema.go), who holds its lease, or that this
// daemon's own has expired.
func (d *DB) fenced(ctx context.Context, sessionID string) error {
	if e := d.newerSchema(ctx); e != nil {
		// The statement wrote nothing for its schema check, not its
		// lease, which the renewer gives up and reports lost.
		return e
	}
	held, err := d.Holder(ctx, sessionID)
	switch {
	case err != nil:
		return fmt.Errorf("session %s: %w (who holds it now could not be read: %w)", sessionID, tasksessiond.ErrLeaseExpired, err)
	case held != nil:
		// Another daemon serves it, sealed or not: send the call there.
		d.unhold(sessionID)
		return held
	}
	var status string
	if err := d.x.GetContext(ctx, &status, `SELECT `+lineageStatus+` FROM sessions WHERE id = $1`, sessionID); err == nil && status != tasksessiond.SessionActive {
		return fmt.Errorf("session %s: %w", sessionID, tasksessiond.ErrSealed)
	}
	// Expired, or ours again meanwhile (a renewal raced this): a retry
	// writes.
	d.unhold(sessionID)
	return fmt.Errorf("session %s: %w", sessionID, tasksessiond.ErrLeaseExpired)
}

// IsLeaseError reports whether err says this daemon does not hold a
// session's lease (any more): another daemon does, or it expired.
func IsLeaseError(err error) bool {
	var held *tasksessiond.LeaseHeldError
	return errors.As(err, &held) || errors.Is(err, tasksessiond.ErrLeaseExpired)
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

// hold notes that the lease of a session was taken or renewed by a
// statement begun at began (this daemon's monotonic clock).
func (d *DB) hold(sessionID string, began time.Time) {
	d.mu.Lock()
	if prev, ok := d.held[sessionID]; !ok || began.After(prev) {
		d.held[sessionID] = began
	}
	d.mu.Unlock()
}

// renewed is hold for a lease this daemon still counts as held: one given
// up while its renewal was under way stays given up.
func (d *DB) renewed(sessionID string, began time.Time) {
	d.mu.Lock()
	if prev, ok := d.held[sessionID]; ok && began.After(prev) {
		d.held[sessionID] = began
	}
	d.mu.Unlock()
}

func (d *DB) unhold(sessionID string) {
	d.mu.Lock()
	delete(d.held, sessionID)
	d.mu.Unlock()
}

// Lease is how long a lease lasts unless renewed.
func (d *DB) Lease() time.Duration { return d.lease }

// Holder is who holds a session's live lease if another daemon does.
func (d *DB) Holder(ctx context.Context, sessionID string) (*tasksessiond.LeaseHeldError, error) {
	var r struct {
		Owner     string    `db:"owner"`
		Info      string    `db:"owner_info"`
		ExpiresAt time.Time `db:"expires_at"`
	}
	err := d.x.GetContext(ctx, &r, `SELECT owner, owner_info, expires_at FROM leases WHERE session_id = $1 AND expires_at > clock_timestamp()`, sessionID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("who holds session %s: %w", sessionID, err)
	case r.Owner == d.owner:
		return nil, nil
	}
	return &tasksessiond.LeaseHeldError{SessionID: sessionID, Owner: r.Info, ExpiresAt: r.ExpiresAt.UTC()}, nil
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

// renewSQL renews, in one statement, those of this daemon's leases whose
// rows no transaction has locked: SKIP LOCKED, so that one session's row
// held by a long transaction (this daemon's compaction, or a frozen one)
// never holds up the renewal of the others. Parameters: owner, session
// ids, lease in microseconds.
const renewSQL = `WITH free AS (
		SELECT session_id FROM leases WHERE owner = $1 AND session_id = ANY($2) FOR NO KEY UPDATE SKIP LOCKED
	)
	UPDATE leases l SET expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond'
	FROM free WHERE l.session_id = free.session_id RETURNING l.session_id`

// renew renews this daemon's leases and then, the database having
// answered, reads its schema: once a newer daemon has migrated it (or a
// write here found so), this daemon gives its sessions to the fleet.
func (d *DB) renew() {
	if err := d.renewLeases(); err != nil {
		return // a read would wait as long again, delaying the next renewal
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.wait(d.lease/3))
	defer cancel()
	if e := d.newerSchema(ctx); e != nil {
		d.giveUpAll(ctx, e)
	}
}

// renewLeases is renew's renewal; its error is the database's when it
// could not be asked.
func (d *DB) renewLeases() error {
	d.mu.Lock()
	ids := make([]string, 0, len(d.held))
	for id := range d.held {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), d.wait(d.lease/3))
	defer cancel()
	var kept []string
	err := d.x.SelectContext(ctx, &kept, renewSQL, d.owner, ids, d.lease.Microseconds())
	var rest []string // not renewed: locked, or no longer ours
	if err == nil {
		ok := make(map[string]bool, len(kept))
		for _, id := range kept {
			ok[id] = true
			d.renewed(id, began)
		}
		for _, id := range ids {
			if !ok[id] {
				rest = append(rest, id)
			}
		}
		if len(rest) > 0 {
			// Which are still ours (their rows were locked) and which are
			// gone: a plain read, which waits on no lock.
			var mine []string
			err = d.x.SelectContext(ctx, &mine, `SELECT session_id FROM leases WHERE owner = $1 AND session_id = ANY($2)`, d.owner, rest)
			if err == nil {
				still := make(map[string]bool, len(mine))
				for _, id := range mine {
					still[id] = true
				}
				var gone []string
				for _, id := range rest {
					if still[id] {
						// Each on its own: it waits on its own row only.
						go d.renewOne(id)
					} else {
						gone = append(gone, id)
					}
				}
				d.lose(gone, nil)
				return nil
			}
		}
	}
	if err != nil {
		d.log.Warn("renewing leases failed; retrying", slog.Int("leases", len(ids)), slog.Any("err", err))
		rest = ids
	}
	// Not renewed for a whole lease: another daemon may serve these
	// sessions by now.
	var lost []string
	d.mu.Lock()
	for _, id := range rest {
		if since, ok := d.held[id]; ok && time.Since(since) >= d.lease {
			lost = append(lost, id)
		}
	}
	d.mu.Unlock()
	d.lose(lost, err)
	return err
}

// renewOne renews one lease whose row was locked at the last renewal,
// waiting on that row only, and for a third of the lease at most.
func (d *DB) renewOne(id string) {
	d.mu.Lock()
	if d.renewing[id] {
		d.mu.Unlock()
		return // one at a time per row: a row locked for long holds one connection, not one per tick
	}
	d.renewing[id] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.renewing, id)
		d.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), d.wait(d.lease/3))
	defer cancel()
	began := time.Now()
	var got string
	err := d.x.GetContext(ctx, &got, confirmSQL, id, d.owner, d.lease.Microseconds())
	switch {
	case err == nil:
		d.renewed(id, began)
	case errors.Is(err, sql.ErrNoRows):
		d.lose([]string{id}, nil)
	default:
		d.mu.Lock()
		since, ok := d.held[id]
		d.mu.Unlock()
		if ok && time.Since(since) >= d.lease {
			d.lose([]string{id}, err)
		}
	}
}

// lose forgets leases this daemon no longer holds and tells the manager.
func (d *DB) lose(ids []string, err error) {
	if len(ids) == 0 {
		return
	}
	d.mu.Lock()
	for _, id := range ids {
		delete(d.held, id)
	}
	fn := d.onLost
	d.mu.Unlock()
	d.log.Warn("leases lost", slog.Int("sessions", len(ids)), slog.Any("err", err))
	if fn != nil {
		for _, id := range ids {
			fn(id)
		}
	}
}
