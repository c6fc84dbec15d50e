package session

import (
	"errors"

	"github.com/tasksessiond/tasksessiond"
)

func unavailable(what string, err error) *tasksessiond.Error {
	// A fleet's lease is not storage failing: say who serves the session.
	var held *tasksessiond.LeaseHeldError
	if errors.As(err, &held) {
		return &tasksessiond.Error{Kind: tasksessiond.KindLeased, Lease: held, Err: err,
			Message: what + " failed: " + held.Error() + "; nothing was changed: send the call to that daemon, or retry once the lease has expired"}
	}
	var locked *tasksessiond.LockedError
	if errors.As(err, &locked) {
		return &tasksessiond.Error{Kind: tasksessiond.KindUnavailable, Err: err,
			Message: what + " failed: " + locked.Error() + "; nothing was changed: retry the call then"}
	}
	if errors.Is(err, tasksessiond.ErrNewerSchema) {
		return &tasksessiond.Error{Kind: tasksessiond.KindUnavailable, Err: err,
			Message: what + " failed: " + err.Error() + "; nothing was changed: send the call to a daemon of the fleet's version"}
	}
	if errors.Is(err, tasksessiond.ErrVanished) {
		return &tasksessiond.Error{Kind: tasksessiond.KindUnavailable, Message: what + " failed: " + err.Error() + "; nothing was changed", Err: err}
	}
	if errors.Is(err, tasksessiond.ErrLeaseExpired) {
		// Not the database failing: this daemon lost the session's lease
		// (it paused, or could not reach the database, for a lease).
		return &tasksessiond.Error{Kind: tasksessiond.KindUnavailable, Err: err,
			Message: what + " failed: this daemon's lease on the session expired before the call could be answered (the daemon was paused or cut off from the database for longer than the lease), and no other daemon has taken it since; nothing was changed: retry the call, which loads the session afresh"}
	}
	return &tasksessiond.Error{Kind: tasksessiond.KindUnavailable, Message: what + " failed: storage is unavailable, nothing was changed; retry the call once the database is writable again", Err: err}
}

// damaged is a session the database holds in a state that contradicts
// itself (edited by hand, say): not storage failing, and not retried away.
// A log that fails its chain is named as the chain check words it.
func damaged(what string, err error) *tasksessiond.Error {
	var broken *tasksessiond.BrokenLogError
	if errors.As(err, &broken) {
		return &tasksessiond.Error{Kind: tasksessiond.KindDamaged, Err: err, Message: broken.Error() + "; nothing was changed"}
	}
	return &tasksessiond.Error{Kind: tasksessiond.KindDamaged, Err: err,
		Message: what + ": the database is damaged (" + err.Error() + "); nothing was changed: tasksessiond fsck says what is wrong and what to do"}
}

// refuse records that id was refused as damaged, for daemon/status, and
// returns e.
func (m *Manager) refuse(id string, e *tasksessiond.Error) *tasksessiond.Error {
	m.mu.Lock()
	if m.refused == nil {
		m.refused = map[string]string{}
	}
	m.refused[id] = e.Message
	m.mu.Unlock()
	return e
}
