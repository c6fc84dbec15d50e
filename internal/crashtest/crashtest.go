// Package crashtest is the crash harness: it runs the real daemon binary,
// drives it with concurrent clients issuing random valid and invalid calls,
// SIGKILLs it at a random moment, restarts it and checks that nothing
// acknowledged was lost or doubled and that every store equals a model
// built from the acknowledged calls.
package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Config configures a run.
type Config struct {
	Binary  string        // the tasksessiond binary
	Dir     string        // holds the database and the socket
	Cycles  int           // kill/restart cycles
	Clients int           // concurrent client sessions (default 16)
	Seed    uint64        // for the random calls and kill moments
	MaxRun  time.Duration // longest time before a kill (default 300ms)
	Sync    string        // the daemon's --sync (default full)
	Log     io.Writer     // progress, one line per cycle; nil for none
	// Postgres, a postgres:// URL, runs fleet mode instead of SQLite: two
	// daemons on that database, the one serving the sessions SIGKILLed
	// each cycle, the other taking them over once their leases expire
	// (then the killed one is restarted, to be killed in its turn).
	Postgres string
	Lease    time.Duration // fleet mode's --lease (default 1s)
	// Fault, in fleet mode: "kill" (SIGKILL, the default), "pause"
	// (SIGSTOP of the daemon serving the sessions until the other has
	// taken them over and written each, then SIGCONT, and reads sent to
	// it meanwhile must not be stale), or "mixed" (the two in turn).
	Fault string
}

// Faults a fleet run injects.
const (
	FaultKill  = "kill"
	FaultPause = "pause"
	FaultMixed = "mixed"
)

// Report is what a run found. Lost and Doubled must be zero.
type Report struct {
	Cycles           int `json:"cycles"`
	Acknowledged     int `json:"acknowledged"`     // calls answered before a kill
	InFlight         int `json:"inFlight"`         // calls sent but unanswered at a kill
	InFlightLanded   int `json:"inFlightLanded"`   // of those, found in the log after the restart
	Retried          int `json:"retried"`          // acknowledged calls re-sent by callId to check they apply once
	Compactions      int `json:"compactions"`      // sessions compacted during the run
	Lost             int `json:"lost"`             // acknowledged calls missing from the log
	Doubled          int `json:"doubled"`          // calls applied more than once
	StoreMismatches  int `json:"storeMismatches"`  // sessions whose store differs from the model after a restart
	FsckProblems     int `json:"fsckProblems"`     // divergences found by fsck, integrity_check included
	IntegrityChecks  int `json:"integrityChecks"`  // PRAGMA integrity_check runs (every tenth cycle and at the end)
	ResultMismatches int `json:"resultMismatches"` // answers that differ from the model's, or retries from the recorded one
	// Fleet mode: the kills after which the other daemon took over, and
	// the longest time from a kill to its first answer for a session.
	Takeovers     int   `json:"takeovers,omitempty"`
	TakeoverMaxMs int64 `json:"takeoverMaxMs,omitempty"`
	// The pause fault: the cycles that paused the daemon rather than
	// killed it, the reads sent to it while paused (after the takeover's
	// writes were acknowledged) and answered once it ran again, and of
	// those the stale ones (a list other than the model's). Stale must be
	// zero.
	Pauses        int `json:"pauses,omitempty"`
	PausedReads   int `json:"pausedReads,omitempty"`
	PausedRefused int `json:"pausedRefused,omitempty"` // answered with an error (-32006, -32004) instead
	Stale         int `json:"stale"`
}

// OK reports whether the run found nothing wrong.
func (r Report) OK() bool {
	return r.Lost == 0 && r.Doubled == 0 && r.StoreMismatches == 0 && r.FsckProblems == 0 && r.ResultMismatches == 0 && r.Stale == 0
}

// acked is an acknowledged call and its result as the daemon sent it.
type acked struct {
	name, args string
	result     json.RawMessage
}

// actor is one client session and its model.
type actor struct {
	n       int
	session string
	gen     int
	model   *store.Store
	acked   map[string]acked // callId -> call, in every generation
	where   map[string]string
	order   []string // callIds in the order acknowledged
	next    int      // the next call number
	// inflight is the call sent when the daemon died, if unanswered.
	inflight *pending
	rng      *rand.Rand
	// mismatches counts answers that differ from the model's.
	mismatches int
	verified   int // a.order[:verified] were found in the log
}

type pending struct {
	callID, name, args string
	compactTo          string // set for a compaction
}

// Run runs the harness.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 16
	}
	if cfg.MaxRun <= 0 {
		cfg.MaxRun = 300 * time.Millisecond
	}
	if cfg.Sync == "" {
		cfg.Sync = "full"
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Second
	}
	switch cfg.Fault {
	case "":
		cfg.Fault = FaultKill
	case FaultKill, FaultPause, FaultMixed:
		if cfg.Postgres == "" && cfg.Fault != FaultKill {
			return Report{}, fmt.Errorf("the %s fault is fleet mode's (--postgres)", cfg.Fault)
		}
	default:
		return Report{}, fmt.Errorf("unknown fault %q: kill, pause or mixed", cfg.Fault)
	}
	h := &harness{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 1)),
		dbPath: filepath.Join(cfg.Dir, "crash.db"), sockets: []string{filepath.Join(cfg.Dir, "crash.sock")}}
	if cfg.Postgres != "" {
		h.dbPath = cfg.Postgres
		h.sockets = append(h.sockets, filepath.Join(cfg.Dir, "crash2.sock"))
	}
	h.procs = make([]*exec.Cmd, len(h.sockets))
	h.socket = h.sockets[0]
	defer h.stop()
	for i := range h.sockets {
		if err := h.start(ctx, i); err != nil {
			return h.report, err
		}
	}
	c, err := client.Dial(ctx, h.socket)
	if err != nil {
		return h.report, err
	}
	for i := range cfg.Clients {
		a := &actor{n: i, session: fmt.Sprintf("crash-%d", i), model: store.New(), acked: map[string]acked{},
			where: map[string]string{}, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+2))}
		if _, err := c.CreateSession(ctx, wire.CreateSession{SessionID: a.session}); err != nil {
			c.Close()
			return h.report, fmt.Errorf("create session: %w", err)
		}
		h.actors = append(h.actors, a)
	}
	c.Close()

	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		if err := ctx.Err(); err != nil {
			return h.report, err
		}
		if err := h.cycle(ctx); err != nil {
			return h.report, fmt.Errorf("cycle %d: %w", cycle, err)
		}
		h.report.Cycles = cycle
		fmt.Fprintf(cfg.Log, "cycle %d: %d acknowledged, %d in flight (%d landed), lost %d, doubled %d, stale %d, takeover %s\n",
			cycle, h.report.Acknowledged, h.report.InFlight, h.report.InFlightLanded, h.report.Lost, h.report.Doubled, h.report.Stale, h.lastTakeover.Round(time.Millisecond))
		if !h.report.OK() {
			return h.report, fmt.Errorf("cycle %d found a fault: %+v", cycle, h.report)
		}
	}
	if err := h.verify(ctx, true); err != nil {
		return h.report, fmt.Errorf("final check: %w", err)
	}
	return h.report, nil
}

type harness struct {
	cfg     Config
	rng     *rand.Rand
	dbPath  string   // the SQLite file, or the postgres:// URL
	sockets []string // one daemon's, or a fleet's two
	procs   []*exec.Cmd
	cur     int    // the daemon the clients drive
	socket  string // sockets[cur]
	killed  time.Time
	// lastTakeover is the last cycle's time from its fault to the first
	// answer at the other daemon, for the progress lines.
	lastTakeover time.Duration
	actors       []*actor
	report       Report
}

func (h *harness) start(ctx context.Context, i int) error {
	args := []string{"serve", "--db", h.dbPath, "--socket", h.sockets[i], "--sync", h.cfg.Sync, "--log-level", "warn"}
	if h.cfg.Postgres != "" {
		args = append(args, "--lease", h.cfg.Lease.String())
	}
	cmd := exec.Command(h.cfg.Binary, args...)
	cmd.Stderr = h.cfg.Log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start daemon: %w", err)
	}
	h.procs[i] = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := client.Dial(ctx, h.sockets[i])
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon did not start: %w", err)
		}
		time.Sleep(10 * time.Millisecond) // waiting for start-up
	}
}

func (h *harness) kill(i int) {
	if p := h.procs[i]; p != nil {
		p.Process.Signal(syscall.SIGKILL)
		p.Wait()
		h.procs[i] = nil
	}
}

func (h *harness) stop() {
	for i := range h.procs {
		h.kill(i)
	}
}

// cycle drives the clients until a random kill, restarts the daemon and verifies.
func (h *harness) cycle(ctx context.Context) error {
	runFor := time.Duration(h.rng.Int64N(int64(h.cfg.MaxRun))) + 5*time.Millisecond
	pause := h.cfg.Fault == FaultPause || (h.cfg.Fault == FaultMixed && h.report.Cycles%2 == 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, a := range h.actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.drive(ctx, h.socket, stop)
		}()
	}
	time.Sleep(runFor) // the moment of the crash
	if pause {
		return h.pauseCycle(ctx, stop, &wg)
	}
	dead := h.cur
	h.kill(dead)
	h.killed = time.Now()
	wg.Wait()

	if h.cfg.Postgres == "" {
		if err := h.start(ctx, dead); err != nil {
			return err
		}
		return h.verify(ctx, false)
	}
	// Fleet mode: the other daemon takes the sessions over (each once its
	// lease expires); the killed one comes back as the spare.
	h.cur = 1 - dead
	h.socket = h.sockets[h.cur]
	if err := h.verify(ctx, false); err != nil {
		return err
	}
	h.report.Takeovers++
	return h.start(ctx, dead)
}

// pauseCycle is a fleet cycle whose fault is a pause: the daemon serving
// the sessions is SIGSTOPped (a frozen VM, a long stall) with calls in
// flight; the other takes every session over once the leases expire and
// writes each; reads are then sent to the stopped daemon, which is
// SIGCONTed: none may answer from its old copy. It stays up, as the spare.
func (h *harness) pauseCycle(ctx context.Context, stop chan struct{}, wg *sync.WaitGroup) error {
	paused := h.cur
	p := h.procs[paused]
	// A connection per session to the paused daemon, made before it stops.
	conns := make([]net.Conn, len(h.actors))
	for i := range conns {
		nc, err := net.Dial("unix", h.sockets[paused])
		if err != nil {
			return err
		}
		defer nc.Close()
		conns[i] = nc
	}
	if err := p.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	stopped := true
	defer func() {
		if stopped {
			p.Process.Signal(syscall.SIGCONT)
		}
	}()
	h.killed = time.Now()
	close(stop) // the clients give up their calls in flight
	wg.Wait()
	h.report.Pauses++

	h.cur = 1 - paused
	h.socket = h.sockets[h.cur]
	if err := h.verify(ctx, false); err != nil {
		return err
	}
	h.report.Takeovers++
	// Every session written at the new holder, acknowledged, so that the
	// paused daemon's copy is behind the log.
	c, err := client.Dial(ctx, h.socket)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, a := range h.actors {
		a.next++
		w := pending{callID: fmt.Sprintf("c%d-%d", a.n, a.next), name: tools.TaskCreate, args: fmt.Sprintf(`{"subject":"after pause %d"}`, h.report.Pauses)}
		if err := h.retryLeased(true, func() error { return a.send(ctx, c, w) }); err != nil {
			return fmt.Errorf("write after the takeover: %w", err)
		}
	}
	// The reads reach the paused daemon's sockets before it runs again.
	for i, a := range h.actors {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
			"params": map[string]any{"sessionId": a.session, "name": tools.TaskList, "arguments": map[string]any{}}})
		if _, err := conns[i].Write(append(req, '\n')); err != nil {
			return fmt.Errorf("send a read to the paused daemon: %w", err)
		}
	}
	if err := p.Process.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	stopped = false
	for i, a := range h.actors {
		conns[i].SetReadDeadline(time.Now().Add(10*h.cfg.Lease + 10*time.Second))
		line, err := bufio.NewReader(conns[i]).ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("the paused daemon did not answer a read of %s after SIGCONT: %w", a.session, err)
		}
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			return fmt.Errorf("read of %s at the paused daemon: %w: %s", a.session, err, line)
		}
		h.report.PausedReads++
		if resp.Error != nil {
			if resp.Error.Code != client.ErrSessionLeased.Code && resp.Error.Code != client.ErrStorageUnavailable.Code {
				return fmt.Errorf("read of %s at the paused daemon: %s", a.session, line)
			}
			h.report.PausedRefused++
			continue
		}
		call, _, _ := tools.Decode(tools.TaskList, json.RawMessage(`{}`), tools.Live)
		want, _ := tools.Execute(a.model, call)
		if b, _, _ := tools.Encode(want); string(b) != string(resp.Result) {
			h.report.Stale++
			fmt.Fprintf(h.cfg.Log, "stale read of %s at the paused daemon: %s\n", a.session, resp.Result)
		}
	}
	return nil
}

// retryLeased runs f until it stops failing with -32006 (or -32004: a
// takeover waiting on a paused holder's lock gives up after lock_timeout):
// in fleet mode, a session of the killed or paused daemon is served
// elsewhere once its lease expires. The first success after a fault of a
// call that must take the lease (measure: a write not in the log yet; a
// read, or a retry the log already answers, needs none) is the takeover
// time.
func (h *harness) retryLeased(measure bool, f func() error) error {
	deadline := time.Now().Add(10*h.cfg.Lease + 10*time.Second)
	for {
		err := f()
		retry := errors.Is(err, client.ErrSessionLeased) || (h.cfg.Postgres != "" && errors.Is(err, client.ErrStorageUnavailable))
		if err == nil || !retry || time.Now().After(deadline) {
			if err == nil && measure && !h.killed.IsZero() && h.cfg.Postgres != "" {
				h.lastTakeover = time.Since(h.killed)
				h.report.TakeoverMaxMs = max(h.report.TakeoverMaxMs, h.lastTakeover.Milliseconds())
				h.killed = time.Time{}
			}
			return err
		}
		time.Sleep(20 * time.Millisecond) // the lease has yet to expire
	}
}

// logReader is what verify reads the log with: package db's read-only
// view of the SQLite file, or package pgdb on the fleet's database.
type logReader interface {
	Calls(ctx context.Context, sessionID string) ([]tasksessiond.Call, error)
	GetSession(ctx context.Context, id string) (tasksessiond.Session, error)
	Close() error
}

func (h *harness) openLog(ctx context.Context) (logReader, error) {
	if h.cfg.Postgres != "" {
		return pgdb.Open(ctx, h.cfg.Postgres, pgdb.Options{})
	}
	return db.OpenReadOnly(ctx, h.dbPath)
}

// drive sends calls until the connection breaks or stop is closed.
func (a *actor) drive(ctx context.Context, socket string, stop <-chan struct{}) {
	c, err := client.Dial(ctx, socket)
	if err != nil {
		return
	}
	defer c.Close()
	go func() {
		select {
		case <-stop:
			c.Close()
		case <-c.Done():
		}
	}()
	for {
		p := a.nextCall()
		a.inflight = &p
		if err := a.send(ctx, c, p); err != nil {
			return // the daemon died; p stays in flight
		}
		a.inflight = nil
	}
}

func (a *actor) nextCall() pending {
	a.next++
	p := pending{callID: fmt.Sprintf("c%d-%d", a.n, a.next)}
	if a.rng.IntN(150) == 0 {
		a.gen++
		p.compactTo = fmt.Sprintf("crash-%d-g%d", a.n, a.gen)
		return p
	}
	p.name, p.args = RandomCall(a.rng, a.model.Len())
	return p
}

// send sends p and, when answered, records it in the model.
func (a *actor) send(ctx context.Context, c *client.Client, p pending) error {
	if p.compactTo != "" {
		_, err := c.Compact(ctx, wire.Compact{SessionID: a.session, NewSessionID: p.compactTo})
		var ce *client.Error
		if errors.As(err, &ce) && (ce.Code == client.ErrSessionSealed.Code && ce.SuccessorID() == p.compactTo) {
			err = nil // a retry of a compaction that landed
		}
		if err != nil {
			return err
		}
		a.session = p.compactTo
		return nil
	}
	var raw json.RawMessage
	err := c.Call(ctx, "tools/call", map[string]any{"sessionId": a.session, "name": p.name, "arguments": json.RawMessage(p.args), "callId": p.callID}, &raw)
	if err != nil {
		return err
	}
	if def, ok := tools.Lookup(p.name); ok && def.Writes {
		// Writes are logged, once, with the result a retry gets back;
		// reads are answered from memory and not logged.
		a.acked[p.callID] = acked{name: p.name, args: p.args, result: raw}
		a.where[p.callID] = a.session
		a.order = append(a.order, p.callID)
	}
	// The model: the same call on a plain store must give the same result.
	var want tools.Result
	if call, _, err := tools.Decode(p.name, json.RawMessage(p.args), tools.Live); err != nil {
		want = tools.ErrorResult(err.Error())
	} else {
		want, _ = tools.Execute(a.model, call)
	}
	if b, _, _ := tools.Encode(want); string(b) != string(raw) {
		a.mismatches++
	}
	return nil
}

// verify checks the state after a restart. Each cycle it checks the calls
// acknowledged since the last one; the final check covers them all.
func (h *harness) verify(ctx context.Context, final bool) error {
	c, err := client.Dial(ctx, h.socket)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := h.openLog(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	counts := map[string]map[string]int{} // session -> callId -> rows
	count := func(sessionID, callID string) (int, error) {
		if counts[sessionID] == nil {
			calls, err := d.Calls(ctx, sessionID)
			if err != nil {
				return 0, err
			}
			counts[sessionID] = map[string]int{}
			for _, c := range calls {
				counts[sessionID][c.CallID]++
			}
		}
		return counts[sessionID][callID], nil
	}

	for _, a := range h.actors {
		if p := a.inflight; p != nil {
			// The call in flight at the kill is wholly present or absent...
			h.report.InFlight++
			landed := false
			if p.compactTo == "" {
				n, err := count(a.session, p.callID)
				if err != nil {
					return err
				}
				if n > 1 {
					h.report.Doubled++
				}
				landed = n > 0
			} else if s, err := d.GetSession(ctx, p.compactTo); err == nil && s.ParentID != "" {
				landed = true
			}
			if landed {
				h.report.InFlightLanded++
			}
			// ...and its retry by callId applies it exactly once.
			if err := h.retryLeased(!landed, func() error { return a.send(ctx, c, *p) }); err != nil {
				return fmt.Errorf("retry in-flight call %s: %w", p.callID, err)
			}
			delete(counts, a.session)
			a.inflight = nil
		}

		// Every acknowledged call is in the log exactly once.
		from := a.verified
		if final {
			from = 0
		}
		for _, id := range a.order[from:] {
			n, err := count(a.where[id], id)
			if err != nil {
				return err
			}
			switch {
			case n == 0:
				h.report.Lost++
			case n > 1:
				h.report.Doubled++
			}
		}
		// A retry of an acknowledged call returns its recorded result, byte
		// for byte, and applies nothing (the store check below would see it).
		if len(a.order) > 0 {
			id := a.order[a.rng.IntN(len(a.order))]
			call := a.acked[id]
			var raw json.RawMessage
			if err := h.retryLeased(false, func() error {
				return c.Call(ctx, "tools/call", map[string]any{"sessionId": a.where[id], "name": call.name, "arguments": json.RawMessage(call.args), "callId": id}, &raw)
			}); err != nil {
				return fmt.Errorf("retry %s: %w", id, err)
			}
			h.report.Retried++
			if string(raw) != string(call.result) {
				h.report.ResultMismatches++
			}
		}
		// The replayed store equals the model.
		var r wire.Resumed
		err := h.retryLeased(false, func() (err error) {
			r, err = c.ResumeSession(ctx, a.session)
			return err
		})
		if err != nil {
			return fmt.Errorf("resume %s: %w", a.session, err)
		}
		if !sameTasks(r.Tasks, a.model.List()) || r.NextTaskid != a.model.NextTaskid() {
			h.report.StoreMismatches++
		}
		h.report.ResultMismatches += a.mismatches
		a.mismatches = 0
		a.verified = len(a.order)
	}
	h.report.Acknowledged, h.report.Compactions = 0, 0
	for _, a := range h.actors {
		h.report.Acknowledged += len(a.acked)
		h.report.Compactions += a.gen
	}
	if pg, ok := d.(*pgdb.DB); ok {
		// fsck reads SQLite; on PostgreSQL the tasks view, which people
		// read with psql, must equal the model.
		for _, a := range h.actors {
			tasks, err := pg.Tasks(ctx, a.session)
			if err != nil {
				return err
			}
			if !slices.Equal(tasks, a.model.List()) {
				h.report.StoreMismatches++
			}
		}
		return nil
	}
	// fsck the sessions in use every fifth cycle (it replays each whole,
	// and the log only grows: what it would find stays for the next); the
	// file's integrity every tenth (it reads the whole file); everything
	// in the final check.
	if !final && h.report.Cycles%5 != 4 {
		return nil
	}
	sq := d.(*db.DB)
	var ids []string
	if !final {
		for _, a := range h.actors {
			ids = append(ids, a.session)
		}
	}
	check := fsck.Sessions
	if final || h.report.Cycles%10 == 9 {
		check = fsck.Check
		h.report.IntegrityChecks++
	}
	rep, err := check(ctx, sq, ids...)
	if err != nil {
		return err
	}
	h.report.FsckProblems += rep.Problems
	return nil
}

func sameTasks(got []tasksessiond.Task, want []tasksessiond.Task) bool {
	return slices.Equal(got, want)
}

// RandomCall returns a valid or invalid call at random against a store of
// about n tasks: the mix the harness drives, shared with the replay property test.
func RandomCall(r *rand.Rand, n int) (name, args string) {
	id := r.IntN(n+3) + 0
	statuses := []string{"pending", "inprogress", "in_progress", "completed", "deleted", "done"}
	switch r.IntN(10) {
	case 0, 1, 2, 3:
		if r.IntN(10) == 0 {
			return tools.TaskCreate, `{"subject":"","description":"invalid"}`
		}
		return tools.TaskCreate, fmt.Sprintf(`{"subject":"task %d","description":"about %d"}`, r.Int(), r.IntN(1000))
	case 4, 5, 6:
		return tools.TaskUpdate, fmt.Sprintf(`{"taskid":%d,"status":%q}`, id, statuses[r.IntN(len(statuses))])
	case 7:
		return tools.TaskUpdate, fmt.Sprintf(`{"taskid":"#%d","subject":"renamed %d"}`, id, r.IntN(100))
	case 8:
		return tools.TaskGet, fmt.Sprintf(`{"taskid":%d}`, id)
	default:
		if r.IntN(3) == 0 {
			return tools.TaskList, `{"extra":1}`
		}
		if r.IntN(4) == 0 {
			return tools.TaskList, `{}`
		}
		return tools.TaskGet, `{"taskid":"#1"}`
	}
}
