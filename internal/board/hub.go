package board

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
)

// Row is a lineage of sessions folded into one row of the page's list: its
// head (the newest session, the one that takes writes) and how many
// compactions led there.
type Row struct {
	// Key is the lineage's first known session: it stays the same across
	// compactions, so the page updates the row in place.
	Key         string               `json:"key"`
	Started     time.Time            `json:"started"` // the first session's creation: the list is newest first by it
	Head        tasksessiond.Session `json:"head"`
	Lineage     []string             `json:"lineage"` // oldest first, the head last
	Compactions int                  `json:"compactions"`
}

// Board is one session's board as the page draws it.
type Board struct {
	Session tasksessiond.Session `json:"session"`
	Tasks   []tasksessiond.Task  `json:"tasks"`
	Lineage []string             `json:"lineage"`
}

// Timings of the hub.
const (
	refreshEvery   = 100 * time.Millisecond // a changed session's counts are re-read at most this often
	pollEvery      = time.Second            // new sessions are found this often (the daemon announces none)
	listPage       = 1000
	subscriberSize = 4096 // messages a page may fall behind by before its stream is closed
	// MaxStreams bounds the event streams open at once: each holds a
	// queue, and a stalled page holds it until its write times out.
	MaxStreams = 64
)

// errTooManyStreams refuses a stream past MaxStreams.
var errTooManyStreams = fmt.Errorf("the board serves at most %d open pages at once; close some of its tabs", MaxStreams)

// errDaemonDown is what a page is told while the hub has no connection.
var errDaemonDown = errors.New("cannot reach the daemon")

// hub keeps the sessions as the daemon last told it, one connection that
// watches every session, and the pages' event streams. Its one goroutine
// (run) reads the daemon; pages subscribe and read from their queues.
type hub struct {
	dial func(context.Context) (*client.Client, error)
	log  *slog.Logger

	mu       sync.Mutex
	c        *client.Client // nil while disconnected
	down     string         // why it is disconnected, for the pages
	sessions map[string]tasksessiond.Session
	subs     map[*subscriber]struct{}
	// reset is the reset message for the state as it is (nil: not built
	// since the last change): the pages that open meanwhile share it.
	reset []byte
}

// subscriber is one page's event stream: encoded server-sent events.
type subscriber struct {
	ch   chan []byte
	gone chan struct{} // closed when the page fell behind and is dropped
}

func newHub(dial func(context.Context) (*client.Client, error), log *slog.Logger) *hub {
	return &hub{dial: dial, log: log, down: "connecting to the daemon", sessions: map[string]tasksessiond.Session{}, subs: map[*subscriber]struct{}{}}
}

// run follows the daemon until ctx ends, reconnecting (with the same dial,
// which may start the daemon again) whenever the connection ends or falls
// behind; each reconnection reloads every page. first, if not nil, is an
// open connection to begin with.
func (h *hub) run(ctx context.Context, first *client.Client) {
	c := first
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		if c == nil {
			var err error
			if c, err = h.dial(ctx); err != nil {
				h.setDown(err)
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
				wait = min(wait*2, 5*time.Second)
				continue
			}
		}
		err := h.follow(ctx, c)
		c.Close()
		c = nil
		if ctx.Err() != nil {
			break
		}
		h.log.Warn("board lost the daemon's changes; reconnecting", slog.Any("err", err))
		h.setDown(err)
		wait = 100 * time.Millisecond
	}
	h.mu.Lock()
	h.c, h.reset = nil, nil
	h.mu.Unlock()
}

func (h *hub) setDown(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.c, h.reset = nil, nil
	msg := err.Error()
	if msg == h.down {
		return
	}
	h.down = msg
	h.broadcastLocked("daemon", map[string]any{"connected": false, "message": msg})
}

// follow subscribes c to every session, loads the list, resets the pages
// and then applies the daemon's notifications until c ends or falls behind.
func (h *hub) follow(ctx context.Context, c *client.Client) error {
	events := make(chan client.Notification, subscriberSize)
	behind := make(chan struct{})
	var lagged atomic.Bool
	c.OnNotification(func(n client.Notification) {
		select {
		case events <- n:
		default:
			// The hub is behind: start over rather than show a stale list.
			if !lagged.Swap(true) {
				close(behind)
			}
		}
	})
	// Subscribe before listing, so that no change falls between the two.
	if err := c.WatchAll(ctx); err != nil {
		return fmt.Errorf("watch all sessions: %w", err)
	}
	all, err := listAll(ctx, c)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.c, h.down, h.sessions, h.reset = c, "", all, nil
	for s := range h.subs {
		h.sendLocked(s, h.resetLocked())
	}
	h.mu.Unlock()
	h.log.Info("board following the daemon", slog.Int("sessions", len(all)))

	// The changes go to the pages at once; re-reading the rows they touch
	// (and looking for new sessions) runs beside, as it may wait on the
	// daemon's database.
	var dirty dirtySet
	rctx, stop := context.WithCancel(ctx)
	reread := make(chan error, 1)
	go func() { reread <- h.reread(rctx, c, &dirty) }()
	defer func() {
		stop()
		<-reread
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Done():
			return fmt.Errorf("the daemon closed the connection: %w", c.Err())
		case <-behind:
			return errors.New("the board fell behind the daemon's changes")
		case err := <-reread:
			reread <- nil // for the deferred wait
			return err
		case n := <-events:
			ev, err := client.DecodeEvent(n)
			if err != nil {
				h.log.Warn("board: undecodable notification", slog.String("method", n.Method), slog.Any("err", err))
				continue
			}
			switch n.Method {
			case client.NotifyTasksChanged:
				h.broadcast("task", ev)
				dirty.add(ev.SessionID)
			case client.NotifySessionCompacted:
				h.broadcast("compacted", ev)
				dirty.add(ev.SessionID, ev.SuccessorID)
			case client.NotifyWatchLagged:
				return fmt.Errorf("the daemon dropped the board's watch: %s", ev.Message)
			}
		}
	}
}

// dirtySet is the sessions changed since their rows were last read.
type dirtySet struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (d *dirtySet) add(ids ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = map[string]bool{}
	}
	for _, id := range ids {
		d.ids[id] = true
	}
}

func (d *dirtySet) take() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := d.ids
	d.ids = nil
	return ids
}

// reread re-reads the changed sessions' rows every refreshEvery, and looks
// for new sessions every pollEvery, until ctx ends or the daemon fails.
func (h *hub) reread(ctx context.Context, c *client.Client, dirty *dirtySet) error {
	refresh := time.NewTicker(refreshEvery)
	defer refresh.Stop()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-refresh.C:
			if ids := dirty.take(); len(ids) > 0 {
				err = h.refresh(ctx, c, ids)
			}
		case <-poll.C:
			err = h.pollNew(ctx, c)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// listAll reads every session, newest first.
func listAll(ctx context.Context, c *client.Client) (map[string]tasksessiond.Session, error) {
	all := map[string]tasksessiond.Session{}
	cursor := ""
	for {
		page, next, err := c.ListSessions(ctx, tasksessiond.ListFilter{Limit: listPage, Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		for _, s := range page {
			all[s.ID] = s
		}
		if next == "" {
			return all, nil
		}
		cursor = next
	}
}

// refresh re-reads the changed sessions (their counts, status, successor)
// and sends the pages their rows.
func (h *hub) refresh(ctx context.Context, c *client.Client, ids map[string]bool) error {
	var got []tasksessiond.Session
	for id := range ids {
		s, err := c.GetSession(ctx, id)
		if errors.Is(err, client.ErrSessionNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get session %s: %w", id, err)
		}
		got = append(got, s)
	}
	h.upsert(got)
	return nil
}

// pollNew finds sessions created since the last look: the newest pages of
// sessions/list, until one it already knew. Changed ones are updated too.
func (h *hub) pollNew(ctx context.Context, c *client.Client) error {
	var got []tasksessiond.Session
	cursor := ""
	for {
		page, next, err := c.ListSessions(ctx, tasksessiond.ListFilter{Limit: 20, Cursor: cursor})
		if err != nil {
			return fmt.Errorf("list sessions: %w", err)
		}
		known := false
		h.mu.Lock()
		for _, s := range page {
			old, ok := h.sessions[s.ID]
			known = known || ok
			if !ok || !sameSession(old, s) {
				got = append(got, s)
			}
		}
		h.mu.Unlock()
		if known || next == "" {
			break
		}
		cursor = next
	}
	h.upsert(got)
	return nil
}

func sameSession(a, b tasksessiond.Session) bool {
	return a.Status == b.Status && a.SuccessorID == b.SuccessorID && a.Counts == b.Counts &&
		a.UpdatedAt.Equal(b.UpdatedAt) && a.Title == b.Title
}

// upsert stores sessions and sends the pages the rows they changed.
func (h *hub) upsert(list []tasksessiond.Session) {
	if len(list) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range list {
		s.HeadID = "" // sessions/get sets it, sessions/list does not: keep one shape
		h.sessions[s.ID] = s
	}
	h.reset = nil
	sent := map[string]bool{}
	for _, s := range list {
		r := h.rowLocked(s.ID)
		if sent[r.Key] {
			continue
		}
		sent[r.Key] = true
		h.broadcastLocked("session", r)
	}
}

// rowLocked folds the lineage holding id into its row.
func (h *hub) rowLocked(id string) Row {
	head := id
	for seen := 0; seen < len(h.sessions); seen++ {
		next := h.sessions[head].SuccessorID
		if _, ok := h.sessions[next]; next == "" || !ok {
			break
		}
		head = next
	}
	lineage := h.lineageLocked(head)
	first := h.sessions[lineage[0]]
	return Row{Key: first.ID, Started: first.CreatedAt, Head: h.sessions[head], Lineage: lineage, Compactions: len(lineage) - 1}
}

// lineageLocked lists head's known ancestors, oldest first, head last.
func (h *hub) lineageLocked(head string) []string {
	ids := []string{head}
	for cur := head; len(ids) <= len(h.sessions); {
		parent := h.sessions[cur].ParentID
		if _, ok := h.sessions[parent]; parent == "" || !ok {
			break
		}
		ids = append(ids, parent)
		cur = parent
	}
	slices.Reverse(ids)
	return ids
}

// rowsLocked folds every lineage, newest first.
func (h *hub) rowsLocked() []Row {
	var rows []Row
	for id, s := range h.sessions {
		if next, ok := h.sessions[s.SuccessorID]; ok && next.ParentID == id {
			continue // not a head: its lineage's row is built from its head
		}
		rows = append(rows, h.rowLocked(id))
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return compareStrings(a.Key, b.Key)
	})
	return rows
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// board reads the board of id's lineage head. It goes to the head the hub
// knows of and resumes it (the daemon answers from memory), following
// successors it did not know of yet; sessions/get is not asked, as right
// after a burst of writes it waits on the database.
func (h *hub) board(ctx context.Context, id string) (Board, error) {
	// A connection of its own: the daemon serves one connection's requests
	// in order, and the hub's may be waiting on a slow list.
	c, err := h.dial(ctx)
	if err != nil {
		return Board{}, fmt.Errorf("%w: %w", errDaemonDown, err)
	}
	defer c.Close()
	h.mu.Lock()
	if _, ok := h.sessions[id]; ok {
		r := h.rowLocked(id)
		id = r.Head.ID
	}
	h.mu.Unlock()
	r, err := c.ResumeSession(ctx, id)
	for hops := 0; err == nil && r.Session.SuccessorID != "" && hops < 1000; hops++ {
		r, err = c.ResumeSession(ctx, r.Session.SuccessorID)
	}
	if err != nil {
		return Board{}, err
	}
	h.mu.Lock()
	lineage := []string{r.Session.ID}
	if _, ok := h.sessions[r.Session.ID]; ok {
		lineage = h.lineageLocked(r.Session.ID)
	}
	h.mu.Unlock()
	if r.Tasks == nil {
		r.Tasks = []tasksessiond.Task{}
	}
	return Board{Session: r.Session, Tasks: r.Tasks, Lineage: lineage}, nil
}

// subscribe adds a page's stream; its first message is the whole list.
// Past MaxStreams it is refused.
func (h *hub) subscribe() (*subscriber, error) {
	s := &subscriber{ch: make(chan []byte, subscriberSize), gone: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) >= MaxStreams {
		return nil, errTooManyStreams
	}
	h.subs[s] = struct{}{}
	h.sendLocked(s, h.resetLocked())
	return s, nil
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.gone)
	}
}

// resetLocked is the message that (re)starts a page: every row and whether
// the daemon is reachable. It is built once per state, however many pages
// (re)start in it.
func (h *hub) resetLocked() []byte {
	if h.reset != nil {
		return h.reset
	}
	rows := h.rowsLocked()
	if rows == nil {
		rows = []Row{}
	}
	h.reset = sse("reset", map[string]any{"connected": h.c != nil, "message": h.down, "rows": rows})
	return h.reset
}

func (h *hub) broadcast(event string, v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.broadcastLocked(event, v)
}

func (h *hub) broadcastLocked(event string, v any) {
	if len(h.subs) == 0 {
		return
	}
	msg := sse(event, v)
	for s := range h.subs {
		h.sendLocked(s, msg)
	}
}

// sendLocked queues msg for s, or drops s when it is too far behind: its
// stream ends, the page's EventSource reconnects and starts from a reset.
func (h *hub) sendLocked(s *subscriber, msg []byte) {
	select {
	case s.ch <- msg:
	default:
		delete(h.subs, s)
		close(s.gone)
	}
}

// sse encodes one server-sent event (JSON has no raw newlines, so one data
// line holds it).
func sse(event string, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	b := make([]byte, 0, len(event)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
