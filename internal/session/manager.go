// Package session keeps the loaded sessions: one store per session, calls
// applied one at a time in log order, each acknowledged only after its log
// row has committed. A session not in memory is loaded by replaying its log.
package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Manager owns the loaded sessions.
type Manager struct {
	db    tasksessiond.Storage
	log   *slog.Logger
	now   func() time.Time // the clock of idleness and uptime; tests set it
	start time.Time

	leases tasksessiond.Leaser           // nil unless the storage is shared by a fleet of daemons
	reader tasksessiond.ConsistentReader // with leases: reads of sessions this daemon does not hold

	mu       sync.Mutex
	sessions map[string]*session
	total    int               // sessions in the database; -1 until first counted
	refused  map[string]string // sessions last refused as damaged, with why

	calls atomic.Int64

	maxLoaded int // sessions kept in memory; the least recently used beyond it are evicted
	watch     watchers

	afterExecute func() // tests: runs between applying a call and logging it
}

// session is one loaded session. mu serialises everything done to it, so
// the order calls are applied in is the order their rows are logged in.
type session struct {
	mu     ctxMutex
	id     string
	loaded bool
	dead   bool // dropped from the manager; whoever holds it must look again

	rec     tasksessiond.Session
	st      *store.Store
	nextSeq int64
	lastSum int64            // the checksum of row nextSeq-1, which the next row chains to
	callIDs map[string]int64 // callId → seq: exactly-once is kept here, rebuilt on load
	// ancestors are the sessions this one was compacted from, newest
	// first: a callId this session has not seen is looked up in their
	// logs, so a retry sent to the successor of the session that recorded
	// it gets the recorded result, not a second task.
	ancestors []string
	report    tasksessiond.ReplayReport
	forced    *tasksessiond.Call // the TaskList fired at compaction, for a successor session
	// unlogged are the error results answered though their row could not
	// be written (SQLite's disk full), by callId: a retry answers the same.
	unlogged map[string]unloggedCall

	lastUsed atomic.Int64 // when the last holder released it, in Unix nanoseconds
	clock    func() time.Time
}

// NewManager returns a manager over d. A nil logger discards.
func NewManager(d tasksessiond.Storage, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{db: d, log: log, now: time.Now, start: time.Now(), sessions: make(map[string]*session), total: -1, maxLoaded: DefaultMaxLoaded}
	if l, ok := d.(tasksessiond.Leaser); ok {
		m.leases = l
		l.OnLost(m.lostLease)
		m.reader, _ = d.(tasksessiond.ConsistentReader)
	}
	return m
}

// SetClock replaces the clock that idleness and uptime are measured by,
// for tests that must not sleep. Call it before the manager is used.
func (m *Manager) SetClock(now func() time.Time) {
	m.now = now
	m.start = now()
}

// acquire returns the session locked, loading it by replay when it is not
// in memory. The caller must call release.
func (m *Manager) acquire(ctx context.Context, id string) (*session, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	for {
		m.mu.Lock()
		s, ok := m.sessions[id]
		if !ok {
			s = &session{id: id, clock: m.now}
			m.sessions[id] = s
		}
		m.mu.Unlock()

		if err := s.mu.Lock(ctx); err != nil {
			// The caller gave up (its peer hung up) while another call held
			// the session: nothing was done.
			return nil, err
		}
		if s.dead {
			s.mu.Unlock()
			continue
		}
		if s.loaded {
			// In fleet mode, memory is answered from only while this
			// daemon surely holds the lease.
			lost, err := m.confirmLease(ctx, s)
			if err != nil {
				s.mu.Unlock()
				return nil, err
			}
			if lost {
				s.mu.Unlock()
				continue // loaded afresh, or refused with who holds it
			}
		}
		if !s.loaded {
			if err := m.loadOrDrop(ctx, s); err != nil {
				return nil, err
			}
			m.evictOverCap(s)
		}
		return s, nil
	}
}

// loadOrDrop loads the locked s; when it cannot (an error, or a panic on a
// log row no version foresaw) s is dropped and unlocked, so that the next
// use tries afresh and nobody waits on a lock no one will release.
func (m *Manager) loadOrDrop(ctx context.Context, s *session) (err error) {
	defer func() {
		if r := recover(); r != nil {
			m.log.Error("replay panicked", slog.String(keySession, s.id), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			err = m.refuse(s.id, damaged("session "+s.id+" cannot be replayed", fmt.Errorf("%v", r)))
		}
		if err != nil {
			m.drop(s)
			s.mu.Unlock()
		}
	}()
	return m.load(ctx, s)
}

func (s *session) release() {
	s.lastUsed.Store(s.clock().UnixNano())
	s.mu.Unlock()
}

// drop removes s from memory; the next access replays it from the
// database. s must be locked.
func (m *Manager) drop(s *session) {
	s.dead = true
	m.mu.Lock()
	if m.sessions[s.id] == s {
		delete(m.sessions, s.id)
	}
	m.mu.Unlock()
	m.giveLease(s.id)
}

// unloggedCall is an answered call whose row could not be written.
type unloggedCall struct {
	name string
	args json.RawMessage
	out  json.RawMessage
}

// callRef is where a call is logged.
type callRef struct {
	session string
	seq     int64
}

func (m *Manager) load(ctx context.Context, s *session) error {
	// Leased first, so that the replay sees all the previous holder wrote.
	if err := m.takeLease(ctx, s.id); err != nil {
		return err
	}
	if err := m.fill(ctx, s, m.db); err != nil {
		return err
	}
	if err := m.inherit(ctx, s); err != nil {
		return err
	}
	s.loaded = true
	return nil
}

// fill rebuilds s from src: its snapshot and its log replayed.
func (m *Manager) fill(ctx context.Context, s *session, src tasksessiond.Source) error {
	s.callIDs = make(map[string]int64)
	s.forced, s.lastSum = nil, 0
	var last int64
	each := func(row *tasksessiond.Call) {
		if row.CallID != "" {
			s.callIDs[row.CallID] = row.Seq
		}
		if row.Forced && s.forced == nil {
			forced := *row
			forced.Result = slices.Clone(row.Result) // row's bytes are the driver's
			forced.Arguments = json.RawMessage("{}")
			s.forced = &forced
		}
		last, s.lastSum = row.Seq, row.Checksum
	}
	// The log is the truth: a session is its snapshot and its log replayed.
	l, err := replay.Session(ctx, src, s.id, replay.Options{Each: each})
	switch {
	case errors.Is(err, tasksessiond.ErrNotFound):
		return tasksessiond.Errorf(tasksessiond.KindNotFound, "session %q not found: create it with sessions/create, or check the id with sessions/list", s.id)
	case errors.Is(err, replay.ErrSnapshot):
		return m.refuse(s.id, damaged("session "+s.id+" has a corrupt snapshot", err))
	case errors.Is(err, tasksessiond.ErrDamaged):
		return m.refuse(s.id, damaged("session "+s.id+" cannot be served", err))
	case err != nil:
		return unavailable("loading session "+s.id, err)
	}
	m.mu.Lock()
	delete(m.refused, s.id)
	m.mu.Unlock()
	report := l.Report
	s.nextSeq = last + 1
	for _, d := range report.Divergences {
		m.log.Warn("replay diverged", slog.String(keySession, s.id), slog.String("divergence", d.String()))
	}
	if last > 0 {
		m.log.Info("session replayed", slog.String(keySession, s.id), slog.Int64("rows", last),
			slog.Int("applied", report.Applied), slog.Int("skippedErrors", report.SkippedErrors),
			slog.Int("skippedInvalid", report.SkippedInvalid), slog.Int("divergent", report.Divergent))
	}
	s.rec, s.st, s.report = l.Session, l.Store, report
	return nil
}

// inherit finds s's ancestors, whose logs a retried callId is looked up in
// (lazily: loading their callIds here would make resuming a successor cost
// as much as its whole lineage's log).
func (m *Manager) inherit(ctx context.Context, s *session) error {
	s.ancestors = nil
	for parent, hops := s.rec.ParentID, 0; parent != "" && hops < maxLineage; hops++ {
		s.ancestors = append(s.ancestors, parent)
		rec, err := m.db.GetSession(ctx, parent)
		if err != nil {
			return unavailable("loading "+parent, err)
		}
		parent = rec.ParentID
	}
	return nil
}

// ancestral looks callID up in the logs of s's ancestors.
func (m *Manager) ancestral(ctx context.Context, s *session, callID string) (callRef, bool, error) {
	if len(s.ancestors) == 0 {
		return callRef{}, false, nil
	}
	sid, seq, ok, err := m.db.FindCall(ctx, s.ancestors, callID)
	if err != nil {
		return callRef{}, false, unavailable("looking up callId "+callID, err)
	}
	return callRef{sid, seq}, ok, nil
}

// maxLineage bounds the ancestors whose callIds a session inherits.
const maxLineage = 10_000

// Log attribute keys.
const (
	keySession = "session"
	keyTool    = "tool"
)

// Call runs a tool call and returns its CallToolResult as JSON. A write is
// returned only after its log row has committed; a retry with a recorded
// callId returns the recorded result and applies nothing. The arguments
// are read once, here (tools.Decode), into the tool's call and as they are
// logged.
func (m *Manager) Call(ctx context.Context, p wire.ToolCall) (json.RawMessage, error) {
	role, def, err := checkCall(p)
	if err != nil {
		return nil, err
	}
	call, args, derr := tools.Decode(p.Name, p.Arguments, tools.Live)
	p.Arguments = args
	if role == tools.RoleCompactWorker || !def.Writes {
		return m.read(ctx, p, role, def, call, derr)
	}
	if out, seen, err := m.retriedUnheld(ctx, p); seen || err != nil {
		return out, err
	}
	s, err := m.acquire(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.release()
	defer func() {
		// A panic may come after memory changed and before the log did:
		// drop the session, so the next use replays it from the log, and
		// let the server's recovery answer.
		if r := recover(); r != nil {
			m.drop(s)
			panic(r)
		}
	}()
	m.calls.Add(1)

	if out, seen, err := m.retried(ctx, s, p, p.Arguments); seen || err != nil {
		return out, err
	}
	if s.rec.Status == tasksessiond.SessionCompacted {
		return nil, m.sealed(s, "send "+p.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.write(ctx, s, p, call, derr)
}

// read answers a read (the compact worker's calls are all reads): it
// changes nothing replay needs, so it is answered from memory and not
// logged, so it never grows the database nor waits on the writer, and a
// retry simply reads again. In fleet mode, a session this daemon does not
// hold is read from the database, without taking its lease.
func (m *Manager) read(ctx context.Context, p wire.ToolCall, role tools.Role, def tools.Def, call tools.Call, derr error) (json.RawMessage, error) {
	s, _, release, err := m.acquireRead(ctx, p.SessionID, false)
	if err != nil {
		return nil, err
	}
	defer release()
	m.calls.Add(1)
	if role == tools.RoleCompactWorker && def.Writes {
		return marshal(tools.ErrorResult(fmt.Sprintf("the compact worker cannot edit tasks: %s is not available to it; it may read the list with TaskList and TaskGet", p.Name)))
	}
	if derr != nil {
		return marshal(tools.ErrorResult(derr.Error()))
	}
	res, _ := tools.Execute(s.st, call)
	return marshal(res)
}

// acquireRead returns a session to read: the one in memory when this
// daemon serves it (its lease confirmed), else, in fleet mode, a copy read
// from the database by one consistent read, which takes no lease and is
// not kept (with its messages when asked). On SQLite it is acquire. The
// caller must call release.
func (m *Manager) acquireRead(ctx context.Context, id string, withMessages bool) (s *session, msgs []tasksessiond.Message, release func(), err error) {
	if m.reader == nil {
		s, err := m.acquire(ctx, id)
		if err != nil {
			return nil, nil, nil, err
		}
		return s, nil, s.release, nil
	}
	if err := validID(id); err != nil {
		return nil, nil, nil, err
	}
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if ok {
		if err := s.mu.Lock(ctx); err != nil {
			return nil, nil, nil, err
		}
		if !s.dead && s.loaded {
			lost, err := m.confirmLease(ctx, s)
			if err != nil {
				s.mu.Unlock()
				return nil, nil, nil, err
			}
			if !lost {
				if withMessages {
					if msgs, err = m.db.Messages(ctx, id); err != nil {
						s.mu.Unlock()
						return nil, nil, nil, unavailable("reading messages", err)
					}
				}
				return s, msgs, s.release, nil
			}
		}
		s.mu.Unlock()
	}
	t := &session{id: id, clock: m.now}
	err = m.reader.ReadConsistent(ctx, func(src tasksessiond.ReadSource) error {
		if err := m.fill(ctx, t, src); err != nil {
			return err
		}
		if withMessages {
			var err error
			if msgs, err = src.Messages(ctx, id); err != nil {
				return unavailable("reading messages", err)
			}
		}
		return nil
	})
	if err != nil {
		var e *tasksessiond.Error
		if !errors.As(err, &e) {
			err = unavailable("reading session "+id, err)
		}
		return nil, nil, nil, err
	}
	return t, msgs, func() {}, nil
}

// checkCall validates what a call names before its session is touched.
func checkCall(p wire.ToolCall) (tools.Role, tools.Def, error) {
	role, err := tools.ParseRole(p.Role)
	if err != nil {
		return role, tools.Def{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "%v", err)
	}
	def, ok := tools.Lookup(p.Name)
	switch {
	case !ok:
		return role, def, tasksessiond.Errorf(tasksessiond.KindInvalid, "unknown tool %q: the tools are %s", p.Name, strings.Join(tools.Names(), ", "))
	case len(p.CallID) > maxIDLen:
		return role, def, tasksessiond.Errorf(tasksessiond.KindInvalid, "callId is %d bytes, the limit is %d", len(p.CallID), maxIDLen)
	case strings.ContainsFunc(p.CallID, unicode.IsControl):
		return role, def, tasksessiond.Errorf(tasksessiond.KindInvalid, "callId %q must not contain control characters", p.CallID)
	}
	return role, def, nil
}

// retried answers a write whose callId the session's lineage has logged:
// with the recorded result, applying nothing.
func (m *Manager) retried(ctx context.Context, s *session, p wire.ToolCall, args json.RawMessage) (out json.RawMessage, seen bool, err error) {
	if p.CallID == "" {
		return nil, false, nil
	}
	if u, ok := s.unlogged[p.CallID]; ok {
		if u.name != p.Name || !sameJSON(u.args, args) {
			return nil, true, tasksessiond.Errorf(tasksessiond.KindConflict, "callId %q was already used in session %s for %s with arguments %s; use a new callId for a new call", p.CallID, s.id, u.name, u.args)
		}
		return u.out, true, nil
	}
	if seq, ok := s.callIDs[p.CallID]; ok {
		out, err := m.recorded(ctx, s.id, p.Name, args, p.CallID, seq)
		return out, true, err
	}
	ref, ok, err := m.ancestral(ctx, s, p.CallID)
	if err != nil || !ok {
		return nil, false, err
	}
	out, err = m.recorded(ctx, ref.session, p.Name, args, p.CallID, ref.seq)
	return out, true, err
}

// retriedUnheld answers, in fleet mode, a retried write for a session this
// daemon does not hold from the log, without taking the lease: the callId
// is in the session's log (a unique index), so the call is answered with
// its recorded result wherever it is retried, even while another daemon
// serves the session or after it was sealed. A callId logged in an
// ancestor is found once the session is loaded, as before.
func (m *Manager) retriedUnheld(ctx context.Context, p wire.ToolCall) (json.RawMessage, bool, error) {
	if m.reader == nil || p.CallID == "" {
		return nil, false, nil
	}
	if err := validID(p.SessionID); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	_, here := m.sessions[p.SessionID]
	m.mu.Unlock()
	if here {
		return nil, false, nil
	}
	sid, seq, ok, err := m.db.FindCall(ctx, []string{p.SessionID}, p.CallID)
	if err != nil {
		return nil, false, unavailable("looking up callId "+p.CallID, err)
	}
	if !ok {
		return nil, false, nil
	}
	m.calls.Add(1)
	out, err := m.recorded(ctx, sid, p.Name, p.Arguments, p.CallID, seq)
	return out, true, err
}

// write applies a write to the session's store, logs it and answers once
// its row has committed. A write that fails (an unknown taskid) is logged
// too, as an error, so that replay skips it.
func (m *Manager) write(ctx context.Context, s *session, p wire.ToolCall, call tools.Call, derr error) (json.RawMessage, error) {
	args := p.Arguments
	var res tools.Result
	var changed *tasksessiond.Task
	if derr != nil {
		res = tools.ErrorResult(derr.Error())
	} else {
		res, changed = tools.Execute(s.st, call)
	}
	if m.afterExecute != nil {
		m.afterExecute()
	}
	out, stored, err := tools.Encode(res)
	if err != nil {
		m.drop(s)
		return nil, &tasksessiond.Error{Kind: tasksessiond.KindInternal, Message: "encode result", Err: err}
	}
	row := call.Append(tasksessiond.Call{SessionID: s.id, Seq: s.nextSeq, CallID: p.CallID, Name: p.Name,
		Arguments: args, IsError: res.IsError, Result: stored}, changed)
	// Once applied in memory the row must be committed or the session
	// dropped; a client hanging up must not cancel that half-way.
	row.Prev = s.lastSum
	rows := []tasksessiond.Append{row}
	if err := m.db.AppendCalls(context.WithoutCancel(ctx), rows); err != nil {
		if isLeaseError(err) {
			// Whatever the call, a lost lease means memory may be stale.
			m.lose(s, err)
			return nil, unavailable(p.Name, err)
		}
		if errors.Is(err, tasksessiond.ErrDamaged) {
			// The log changed under the daemon: memory is no longer its replay.
			m.drop(s)
			return nil, m.refuse(s.id, damaged("session "+s.id+" cannot be served", err))
		}
		if changed == nil && m.leases == nil {
			// A failed call changed nothing, so memory still equals the
			// database: answer it unlogged rather than fail it because
			// the disk is full, and keep the answer, so that a retry with
			// its callId gets the same one while the session is loaded.
			m.log.Warn("could not log a call that changed nothing; answering it unlogged", slog.String(keySession, s.id), slog.String(keyTool, p.Name), slog.Any("err", err))
			if p.CallID != "" {
				if s.unlogged == nil {
					s.unlogged = map[string]unloggedCall{}
				}
				s.unlogged[p.CallID] = unloggedCall{name: p.Name, args: args, out: out}
			}
			return out, nil
		}
		if changed == nil {
			// Fleet mode: another daemon may serve the session next, and it
			// would not know of an answer kept here. Unanswered, the call
			// is simply run again when retried. Memory is unchanged.
			m.log.Warn("could not log a call that changed nothing; refused, to be retried", slog.String(keySession, s.id), slog.String(keyTool, p.Name), slog.Any("err", err))
			return nil, unavailable(p.Name, err)
		}
		m.drop(s)
		m.log.Error("append failed; session dropped from memory", slog.String(keySession, s.id), slog.String(keyTool, p.Name), slog.Any("err", err))
		return nil, unavailable(p.Name, err)
	}
	m.logged(s, rows[0].Call, changed)
	return out, nil
}

// logged moves the session past a committed row: its next seq, its
// callIds, its last activity, and the watchers told of the change.
func (m *Manager) logged(s *session, row tasksessiond.Call, changed *tasksessiond.Task) {
	if changed != nil {
		op := OpUpdate
		if row.Name == tools.TaskCreate {
			op = OpCreate
		}
		t := *changed
		m.notify(wire.Event{SessionID: s.id, Seq: row.Seq, Op: op, Task: &t})
	}
	s.nextSeq, s.lastSum = row.Seq+1, row.Checksum
	if row.CallID != "" {
		s.callIDs[row.CallID] = row.Seq
	}
	// The session was last active at its last logged call, as sessions/get
	// and sessions/list read it from the log.
	if row.CreatedAt.After(s.rec.UpdatedAt) {
		s.rec.UpdatedAt = row.CreatedAt
	}
}

// recorded answers a retry: the recorded result when the call is the same,
// a conflict when the callId was used for a different call.
func (m *Manager) recorded(ctx context.Context, session, name string, args json.RawMessage, callID string, seq int64) (json.RawMessage, error) {
	row, err := m.db.CallBySeq(ctx, session, seq)
	if errors.Is(err, tasksessiond.ErrDamaged) {
		return nil, m.refuse(session, damaged("session "+session+" cannot be served", err))
	}
	if err != nil {
		return nil, unavailable("looking up callId "+callID, err)
	}
	if row.Name != name || !sameJSON(row.Arguments, args) {
		return nil, tasksessiond.Errorf(tasksessiond.KindConflict, "callId %q was already used in session %s for %s with arguments %s; use a new callId for a new call", callID, session, row.Name, row.Arguments)
	}
	out, err := tools.Restore(row.Result)
	if err == nil {
		// As it was sent, compact: a row edited by hand must not break
		// the line a response is, nor bring bytes that are not UTF-8.
		v := jsontext.Value(bytes.Clone(out))
		err = v.Compact(jsontext.PreserveRawStrings(false), jsontext.EscapeForJS(true)) // strings escaped as Encode does: bytes not UTF-8 become U+FFFD
		out = v
	}
	if err != nil {
		return nil, &tasksessiond.Error{Kind: tasksessiond.KindInternal, Message: "the recorded result of callId " + callID, Err: err}
	}
	return out, nil
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	lenient := jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if jsonv2.Unmarshal(a, &x, lenient) != nil || jsonv2.Unmarshal(b, &y, lenient) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(x, y)
}

func marshal(r tools.Result) (json.RawMessage, error) {
	b, _, err := tools.Encode(r)
	if err != nil {
		return nil, &tasksessiond.Error{Kind: tasksessiond.KindInternal, Message: "encode result", Err: err}
	}
	return b, nil
}

const maxIDLen = 128

func validID(id string) error {
	switch {
	case id == "":
		return tasksessiond.Errorf(tasksessiond.KindInvalid, "sessionId is required")
	case len(id) > maxIDLen:
		return tasksessiond.Errorf(tasksessiond.KindInvalid, "sessionId is %d bytes, the limit is %d", len(id), maxIDLen)
	case strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }):
		return tasksessiond.Errorf(tasksessiond.KindInvalid, "sessionId %q must not contain spaces or control characters", id)
	}
	return nil
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }
