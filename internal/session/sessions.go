package session

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The session layer answers in the wire's types (package wire declares
// each method's params and result once), so that the server hands them on
// as they are and a change to a result's shape is a change to wire.

// info is a session as clients see it: with its list's counts, without
// the snapshot it was made with (the list itself goes with it instead).
func info(rec tasksessiond.Session, c tasksessiond.Counts) tasksessiond.Session {
	rec.Counts, rec.Snapshot = c, nil
	return rec
}

const (
	maxTitleLen      = 1000
	maxMetadataDepth = 64
)

// Create makes a new, empty session. Without an id it generates one.
func (m *Manager) Create(ctx context.Context, p wire.CreateSession) (tasksessiond.Session, error) {
	if p.SessionID == "" {
		p.SessionID = newID()
	}
	if err := validID(p.SessionID); err != nil {
		return tasksessiond.Session{}, err
	}
	if len(p.Title) > maxTitleLen {
		return tasksessiond.Session{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "title is %d bytes, the limit is %d", len(p.Title), maxTitleLen)
	}
	if strings.ContainsFunc(p.Title, unicode.IsControl) {
		return tasksessiond.Session{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "title must not contain control characters (NUL, newlines, ...): it is one line for people")
	}
	meta := tools.Canonical(p.Metadata)
	if meta[0] != '{' {
		return tasksessiond.Session{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "metadata must be a JSON object")
	}
	if d := depth(meta); d > maxMetadataDepth {
		// SQLite's JSON functions stop at 1,000 levels; the shell's
		// json_extract must work on every row.
		return tasksessiond.Session{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "metadata is nested %d levels deep, the limit is %d", d, maxMetadataDepth)
	}
	rec := tasksessiond.Session{ID: p.SessionID, Title: p.Title, Metadata: meta}
	if err := m.db.CreateSession(ctx, &rec); err != nil {
		if errors.Is(err, tasksessiond.ErrExists) {
			return tasksessiond.Session{}, tasksessiond.Errorf(tasksessiond.KindExists, "session %q already exists: resume it with sessions/resume, or create one with another id", p.SessionID)
		}
		return tasksessiond.Session{}, unavailable("creating session", err)
	}
	m.created()
	m.log.Info("session created", slog.String(keySession, rec.ID))
	return info(rec, tasksessiond.Counts{}), nil
}

// Get returns a session's record and counts (its list's, as its log
// replays to). It does not load the session.
func (m *Manager) Get(ctx context.Context, id string) (tasksessiond.Session, error) {
	if err := validID(id); err != nil {
		return tasksessiond.Session{}, err
	}
	rec, err := m.db.GetSession(ctx, id)
	if errors.Is(err, tasksessiond.ErrNotFound) {
		return tasksessiond.Session{}, tasksessiond.Errorf(tasksessiond.KindNotFound, "session %q not found", id)
	}
	if err != nil {
		return tasksessiond.Session{}, unavailable("reading session", err)
	}
	c, err := m.counts(ctx, id)
	if err != nil {
		return tasksessiond.Session{}, err
	}
	out := info(rec, c)
	out.HeadID = id
	if rec.SuccessorID != "" {
		if out.HeadID, err = m.db.Head(ctx, id); err != nil {
			return tasksessiond.Session{}, unavailable("reading session", err)
		}
	}
	return out, nil
}

// List returns sessions, newest first, each with its counts as its log
// replays to. It loads no session.
func (m *Manager) List(ctx context.Context, p tasksessiond.ListFilter) ([]tasksessiond.Session, string, error) {
	switch p.Status {
	case "", tasksessiond.SessionActive, tasksessiond.SessionCompacted:
	default:
		return nil, "", tasksessiond.Errorf(tasksessiond.KindInvalid, "status must be %q or %q, got %q", tasksessiond.SessionActive, tasksessiond.SessionCompacted, p.Status)
	}
	if p.Limit < 0 || p.Limit > 1000 {
		return nil, "", tasksessiond.Errorf(tasksessiond.KindInvalid, "limit must be between 1 and 1000, got %d", p.Limit)
	}
	recs, next, err := m.db.ListSessions(ctx, p)
	if errors.Is(err, tasksessiond.ErrBadCursor) {
		return nil, "", tasksessiond.Errorf(tasksessiond.KindInvalid, "cursor %q is not one that sessions/list returned: pass a nextCursor as it came, or none for the first page", p.Cursor)
	}
	if err != nil {
		return nil, "", unavailable("listing sessions", err)
	}
	out := make([]tasksessiond.Session, 0, len(recs))
	for _, rec := range recs {
		c, err := m.counts(ctx, rec.ID)
		if tasksessiond.KindOf(err) == tasksessiond.KindDamaged {
			// Listed, saying why it is refused: one session's damage
			// never hides the others.
			rec = info(rec, tasksessiond.Counts{})
			rec.Refused = err.(*tasksessiond.Error).Message
			out = append(out, rec)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		out = append(out, info(rec, c))
	}
	return out, next, nil
}

// counts are a session's counts as its log replays to, never from a copy
// beside the log that a hand edit could make disagree with what resume
// shows.
func (m *Manager) counts(ctx context.Context, id string) (tasksessiond.Counts, error) {
	s, release, err := m.peek(ctx, id)
	if err != nil {
		return tasksessiond.Counts{}, err
	}
	defer release()
	return s.st.Counts(), nil
}

// peek returns a session to read without keeping it in memory: the one
// loaded, else one replayed for this read alone (a list of sessions must
// not evict the ones in use, nor make start-up cost a replay of each). In
// fleet mode it is acquireRead. The caller must call release.
func (m *Manager) peek(ctx context.Context, id string) (*session, func(), error) {
	if m.reader != nil {
		s, _, release, err := m.acquireRead(ctx, id, false)
		return s, release, err
	}
	if err := validID(id); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if ok {
		if err := s.mu.Lock(ctx); err != nil {
			return nil, nil, err
		}
		if !s.dead && s.loaded {
			return s, s.release, nil
		}
		s.mu.Unlock()
	}
	t := &session{id: id, clock: m.now}
	if err := m.fill(ctx, t, m.db); err != nil {
		return nil, nil, err
	}
	return t, func() {}, nil
}

// Resume loads a session (by replay when it is not in memory) and returns
// its tasks, injected messages and the report of the replay that loaded it.
// In fleet mode a daemon that does not serve the session reads it from the
// database without taking its lease (the session's host may be writing it
// at another daemon).
func (m *Manager) Resume(ctx context.Context, id string) (wire.Resumed, error) {
	if m.reader != nil {
		s, msgs, release, err := m.acquireRead(ctx, id, true)
		if err != nil {
			return wire.Resumed{}, err
		}
		defer release()
		return m.resumed(s, msgs), nil
	}
	s, err := m.acquire(ctx, id)
	if err != nil {
		return wire.Resumed{}, err
	}
	defer s.release()
	msgs, err := m.db.Messages(ctx, id)
	if err != nil {
		return wire.Resumed{}, unavailable("reading messages", err)
	}
	return m.resumed(s, msgs), nil
}

func (m *Manager) resumed(s *session, msgs []tasksessiond.Message) wire.Resumed {
	r := wire.Resumed{Session: info(s.rec, s.st.Counts()), Tasks: taskList(s.st), NextTaskid: s.st.NextTaskid(), Messages: msgs, LastSeq: s.nextSeq - 1,
		Replay: s.report}
	if s.forced != nil {
		fc := forcedCall(s.forced)
		r.ForcedCall = &fc
	}
	return r
}

// Replay builds a new session's store from a host's transcript: the session
// is created when it does not exist and must be empty when it does. The
// applied calls are logged, in one transaction, so the session resumes like
// any other.
func (m *Manager) Replay(ctx context.Context, p wire.ReplaySession) (wire.Resumed, error) {
	if err := validID(p.SessionID); err != nil {
		return wire.Resumed{}, err
	}
	seen := make(map[string]bool)
	for i, c := range p.Calls {
		if c.CallID == "" {
			continue
		}
		if seen[c.CallID] {
			return wire.Resumed{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "calls[%d]: callId %q appears twice in the transcript", i, c.CallID)
		}
		seen[c.CallID] = true
	}
	if _, err := m.db.GetSession(ctx, p.SessionID); errors.Is(err, tasksessiond.ErrNotFound) {
		if _, err := m.Create(ctx, wire.CreateSession{SessionID: p.SessionID}); err != nil && tasksessiond.KindOf(err) != tasksessiond.KindExists {
			return wire.Resumed{}, err
		}
	} else if err != nil {
		return wire.Resumed{}, unavailable("reading session", err)
	}

	s, err := m.acquire(ctx, p.SessionID)
	if err != nil {
		return wire.Resumed{}, err
	}
	defer s.release()
	defer func() {
		// As in Call: memory may be ahead of the log.
		if r := recover(); r != nil {
			m.drop(s)
			panic(r)
		}
	}()
	if s.nextSeq != 1 || s.rec.Snapshot != nil || s.rec.Status != tasksessiond.SessionActive {
		return wire.Resumed{}, tasksessiond.Errorf(tasksessiond.KindExists, "session %q already has a history: sessions/replay builds a new, empty session; give a new sessionId", p.SessionID)
	}

	var report tasksessiond.ReplayReport
	var rows []tasksessiond.Append
	for _, c := range p.Calls {
		// Read as a live call's are, once (Decode canonicalises them).
		step, res := replay.Render(s.st, replay.Call{Seq: int64(len(rows) + 1), Name: c.Name, Arguments: c.Arguments, IsError: c.IsError})
		args := tools.Canonical(c.Arguments)
		step.Count(&report)
		if step.Outcome != replay.Applied {
			continue
		}
		_, stored, err := tools.Encode(res)
		if err != nil {
			m.drop(s)
			return wire.Resumed{}, &tasksessiond.Error{Kind: tasksessiond.KindInternal, Message: "encode result", Err: err}
		}
		rows = append(rows, step.Call.Append(tasksessiond.Call{SessionID: s.id, Seq: int64(len(rows) + 1), CallID: c.CallID,
			Name: c.Name, Arguments: args, Result: stored}, step.Task))
	}
	if len(rows) > 0 {
		if err := m.db.AppendCalls(context.WithoutCancel(ctx), rows); err != nil {
			m.drop(s)
			return wire.Resumed{}, unavailable("replaying transcript", err)
		}
	}
	s.nextSeq = int64(len(rows) + 1)
	if len(rows) > 0 {
		s.lastSum = rows[len(rows)-1].Call.Checksum
	}
	for _, r := range rows {
		if r.Call.CallID != "" {
			s.callIDs[r.Call.CallID] = r.Call.Seq
		}
	}
	s.report = report
	return m.resumed(s, []tasksessiond.Message{}), nil
}

// Stats is what daemon/status reports of the sessions.
type Stats struct {
	Loaded      int               `json:"loaded"`
	Total       int               `json:"total"`
	CallsServed int64             `json:"callsServed"`
	WAL         *tasksessiond.WAL `json:"wal,omitempty"`
	Fleet       *wire.FleetStatus `json:"fleet,omitempty"`
	Problem     string            `json:"problem,omitempty"`
	// Refused are the sessions refused as damaged since the daemon
	// started (and not loaded since), by id, with why.
	Refused []wire.RefusedSession `json:"refused,omitempty"`
}

// Stats counts loaded and stored sessions. The stored count is read from the
// database once and then kept, so daemon/status stays off the disk.
func (m *Manager) Stats(ctx context.Context) (Stats, error) {
	m.mu.Lock()
	counted := m.total >= 0
	m.mu.Unlock()
	if !counted {
		// Counted outside the lock, which every session lookup takes. A
		// session created meanwhile may be in the count or not; created()
		// only adds once there is a count, so at worst it is one short
		// until the daemon restarts.
		total, err := m.db.CountSessions(ctx)
		if err != nil {
			return Stats{}, unavailable("counting sessions", err)
		}
		m.mu.Lock()
		if m.total < 0 {
			m.total = total
		}
		m.mu.Unlock()
	}
	st := Stats{CallsServed: m.calls.Load()}
	if m.leases != nil {
		st.Fleet = &wire.FleetStatus{LeaseOwner: m.leases.Owner(), LeasesHeld: m.leases.Held(), Lease: m.leases.Lease().String()}
	} else {
		wal := m.db.WAL()
		st.WAL = &wal
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st.Loaded, st.Total, st.Problem = len(m.sessions), m.total, m.db.Problem()
	for id, why := range m.refused {
		st.Refused = append(st.Refused, wire.RefusedSession{ID: id, Reason: why})
	}
	slices.SortFunc(st.Refused, func(a, b wire.RefusedSession) int { return strings.Compare(a.ID, b.ID) })
	return st, nil
}

// created counts a new session in the kept total.
func (m *Manager) created() {
	m.mu.Lock()
	if m.total >= 0 {
		m.total++
	}
	m.mu.Unlock()
}

// Uptime is the time since the manager started.
func (m *Manager) Uptime() time.Duration { return m.now().Sub(m.start) }

// depth is the deepest nesting of objects and arrays in the JSON text b
// (session metadata is held to a depth SQLite's JSON functions can read;
// the decoder bounds nesting only at 10,000 levels).
func depth(b []byte) int {
	d, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}
