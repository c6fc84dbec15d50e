package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// running is the daemon started as `tasksessiond serve` starts it, on a
// real socket in this process.
type running struct {
	d      *daemon.Daemon
	socket string
	dbPath string
	done   chan error
}

func (b *bencher) startDaemon(ctx context.Context, sync db.Sync) (*running, error) {
	return start(ctx, daemon.Config{DB: b.path("daemon.db"), Socket: b.path("d.sock"), Sync: sync, MaxConns: 256})
}

func start(ctx context.Context, cfg daemon.Config) (*running, error) {
	d, err := daemon.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rd := &running{d: d, socket: cfg.Socket, dbPath: cfg.DB, done: make(chan error, 1)}
	go func() { rd.done <- d.Serve() }()
	return rd, nil
}

func (rd *running) stop() error {
	err := rd.d.Close(context.Background())
	return errors.Join(err, <-rd.done)
}

// newSessions creates n sessions over c and returns their ids.
func newSessions(ctx context.Context, c *client.Client, n int) ([]string, error) {
	ids := make([]string, n)
	for i := range ids {
		s, err := c.CreateSession(ctx, wire.CreateSession{})
		if err != nil {
			return nil, err
		}
		ids[i] = s.ID
	}
	return ids, nil
}

// callTool makes a tool call, a result with isError being an error too.
//
// The result is checked, not decoded: the load generator shares the
// machine with the daemon, and its own decoding would take CPU from what
// is measured (the same for every binary measured). The params are sent in
// the order the client and the MCP bridge send them, the name before the
// arguments, which the daemon reads in its parse's one pass.
func callTool(ctx context.Context, c *client.Client, p wire.ToolCall) error {
	var raw json.RawMessage
	if err := c.Call(ctx, wire.MethodToolsCall, p, &raw); err != nil {
		return err
	}
	if bytes.Contains(raw, []byte(`"isError":true`)) { // quotes in a string are escaped
		return fmt.Errorf("%s: %s", p.Name, raw)
	}
	return nil
}

// drive runs clients concurrently, each on its own connection, calling op
// in a loop for the phase, and returns the rate and latencies.
func (b *bencher) drive(ctx context.Context, socket string, clients int, op func(c *client.Client, worker, i int) error) (float64, Latency, error) {
	return driveFor(ctx, socket, clients, b.sz.phase, op)
}

// driveFor runs op on clients connections at once for phase and returns
// the rate and the latencies.
func driveFor(ctx context.Context, socket string, clients int, phase time.Duration, op func(c *client.Client, worker, i int) error) (float64, Latency, error) {
	conns := make([]*client.Client, clients)
	for i := range conns {
		c, err := client.Dial(ctx, socket)
		if err != nil {
			return 0, Latency{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	deadline := time.Now().Add(phase)
	begin := time.Now()
	for w, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for i := 0; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				if err := op(c, w, i); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(len(all)) / time.Since(begin).Seconds(), percentiles(all), firstErr
}

var concurrency = []int{1, 8, 64}

// socket measures the no-op ceiling, the unlogged tool call and the
// daemon's tool calls, each as ratios to the baselines.
func (b *bencher) socket(ctx context.Context, r *Results) error {
	for _, sync := range []db.Sync{db.SyncFull, db.SyncNormal} {
		if err := b.socketPhase(ctx, sync, r); err != nil {
			return err
		}
	}
	for _, rates := range [][]Rate{r.Unlogged, r.Daemon} {
		for i := range rates {
			x := &rates[i]
			for _, noop := range r.Noop {
				if noop.Clients == x.Clients && noop.PerSec > 0 {
					x.VsNoop = x.PerSec / noop.PerSec
				}
			}
			x.VsRawSingle = vsRawSingle(r, *x)
		}
	}
	return nil
}

// vsRawSingle is x's rate against raw one-row commits under its sync (0
// when x has none or the run measured none).
func vsRawSingle(r *Results, x Rate) float64 {
	for _, raw := range r.Raw {
		if x.Sync != "" && raw.Sync == x.Sync && strings.Contains(raw.Name, "one row") && raw.PerSec > 0 {
			return x.PerSec / raw.PerSec
		}
	}
	return 0
}

// socketPhase runs one daemon under sync: the baselines (under full only,
// as they do not touch the database), then the tool calls.
func (b *bencher) socketPhase(ctx context.Context, sync db.Sync, r *Results) (err error) {
	rd, err := b.startDaemon(ctx, sync)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rd.stop()) }()
	c, err := client.Dial(ctx, rd.socket)
	if err != nil {
		return err
	}
	defer c.Close()
	if sync == db.SyncFull {
		for _, n := range concurrency {
			rate, lat, err := b.drive(ctx, rd.socket, n, func(c *client.Client, _, _ int) error {
				_, err := c.Status(ctx)
				return err
			})
			if err != nil {
				return err
			}
			r.Noop = append(r.Noop, Rate{Name: "no-op (daemon/status)", Clients: n, PerSec: rate, Latency: lat})
		}
		if err := b.unlogged(ctx, c, rd.socket, r); err != nil {
			return err
		}
	}
	for _, n := range concurrency {
		ids, err := seeded(ctx, rd.socket, n, openTasks)
		if err != nil {
			return err
		}
		// Each session holds openTasks open tasks, creates one, then
		// completes the oldest: the mix a working agent produces.
		rate, lat, err := b.drive(ctx, rd.socket, n, agentMix(ctx, ids))
		if err != nil {
			return err
		}
		r.Daemon = append(r.Daemon, Rate{Name: "tools/call", Sync: string(sync), Clients: n, PerSec: rate, Latency: lat})
	}
	return nil
}

// unlogged measures the tool path without the database: the compact
// worker's TaskGet, which is decoded, executed and rendered like any call
// but neither logged nor committed. Between it and the no-op lies the cost
// of a tool call itself; between it and tools/call, the cost of storage.
func (b *bencher) unlogged(ctx context.Context, c *client.Client, socket string, r *Results) error {
	ids, err := newSessions(ctx, c, 1)
	if err != nil {
		return err
	}
	if err := callTool(ctx, c, wire.ToolCall{SessionID: ids[0], Name: tools.TaskCreate, Arguments: json.RawMessage(rowArgs)}); err != nil {
		return err
	}
	for _, n := range concurrency {
		rate, lat, err := b.drive(ctx, socket, n, func(c *client.Client, _, _ int) error {
			return callTool(ctx, c, wire.ToolCall{SessionID: ids[0], Name: tools.TaskGet, Role: "compact_worker", Arguments: json.RawMessage(`{"taskid":1}`)})
		})
		if err != nil {
			return err
		}
		r.Unlogged = append(r.Unlogged, Rate{Name: "tools/call, unlogged read", Clients: n, PerSec: rate, Latency: lat})
	}
	return nil
}

// workload is the calls a working model makes: each session creates a task,
// then completes it, so its open list stays short.
func workload(ctx context.Context, ids []string) func(c *client.Client, w, i int) error {
	return func(c *client.Client, w, i int) error {
		name, args := workloadCall(i)
		return callTool(ctx, c, wire.ToolCall{SessionID: ids[w], Name: name, Arguments: args, CallID: fmt.Sprintf("b-%d-%d", w, i)})
	}
}

// workloadCall is a session's i-th call: create a task, then complete it.
func workloadCall(i int) (name string, args json.RawMessage) {
	if i%2 == 1 {
		return tools.TaskUpdate, json.RawMessage(fmt.Sprintf(`{"taskid":%d,"status":"completed"}`, i/2+1))
	}
	return tools.TaskCreate, json.RawMessage(rowArgs)
}

// SustainedResult is the daemon under 64 sessions of writes for a long
// run, and how large its WAL grew.
type SustainedResult struct {
	Sessions int           `json:"sessions"`
	Took     time.Duration `json:"took"`
	PerSec   float64       `json:"perSec"`
	WALPeak  int64         `json:"walPeakBytes"`
}

// sustained drives the daemon (full sync) with 64 sessions for the long
// phase, watching the size of its WAL.
func (b *bencher) sustained(ctx context.Context, r *Results) (err error) {
	rd, err := b.startDaemon(ctx, db.SyncFull)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rd.stop()) }()
	c, err := client.Dial(ctx, rd.socket)
	if err != nil {
		return err
	}
	defer c.Close()
	ids, err := newSessions(ctx, c, storageSessions)
	if err != nil {
		return err
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if fi, err := os.Stat(rd.dbPath + "-wal"); err == nil && fi.Size() > peak.Load() {
					peak.Store(fi.Size())
				}
			}
		}
	}()
	rate, _, err := driveFor(ctx, rd.socket, storageSessions, b.sz.sustained, workload(ctx, ids))
	close(stop)
	<-watched
	r.Sustained = SustainedResult{Sessions: storageSessions, Took: b.sz.sustained, PerSec: rate, WALPeak: peak.Load()}
	return err
}

// inProcess runs one session's workload through the session manager on a
// database of its own, with no socket: between it and the raw commit lies
// the daemon's storage path; between it and tools/call, the socket and the
// goroutines a call passes through on its way in and out.
func (b *bencher) inProcess(ctx context.Context, r *Results) error {
	d, err := db.Open(ctx, b.path("inprocess.db"), db.Options{Sync: db.SyncFull})
	if err != nil {
		return err
	}
	defer d.Close()
	m := session.NewManager(d, nil)
	s, err := m.Create(ctx, wire.CreateSession{})
	if err != nil {
		return err
	}
	var lat []time.Duration
	begin := time.Now()
	for i := 0; time.Since(begin) < b.sz.phase; i++ {
		name, args := workloadCall(i)
		p := wire.ToolCall{SessionID: s.ID, Name: name, Arguments: args, CallID: fmt.Sprint("p-", i)}
		t0 := time.Now()
		res, err := m.Call(ctx, p)
		if err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
		if bytes.Contains(res, []byte(`"isError":true`)) {
			return fmt.Errorf("%s: %s", p.Name, res)
		}
	}
	r.InProcess = Rate{Name: "session.Call in process, no socket", Sync: string(db.SyncFull), Clients: 1,
		PerSec: float64(len(lat)) / time.Since(begin).Seconds(), Latency: percentiles(lat)}
	r.InProcess.VsRawSingle = vsRawSingle(r, r.InProcess)
	return nil
}
