package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Fleet mode's measurements (go run ./cmd/tsdbench --fleet): the daemon's
// calls/s at 64 sessions on one PostgreSQL with 1, 2 and 4 daemons, beside
// one daemon on SQLite, all durable (SQLite --sync full; PostgreSQL with
// fsync and synchronous_commit on), in one run; and how long another daemon
// takes to serve a 10,000-call session after its daemon is SIGKILLed
// (the lease's expiry, then the replay).

// FleetConfig configures a fleet run.
type FleetConfig struct {
	Dir    string // scratch space
	Binary string // tasksessiond, run as the daemon that is killed
	// Postgres is the URL of a server to create the run's databases on
	// (its role may CREATE DATABASE); empty starts a scratch one from the
	// installed PostgreSQL binaries (package pgtest), durable.
	Postgres string
	Quick    bool
	Lease    time.Duration // of the takeover (default 10s, 1s when Quick)
	Log      io.Writer
}

// FleetResults is what a fleet run measured.
type FleetResults struct {
	Machine  Machine       `json:"machine"`
	Sessions int           `json:"sessions"`
	Phase    time.Duration `json:"phase"`
	SQLite   Rate          `json:"sqlite"`
	Postgres []FleetRate   `json:"postgres"`
	Takeover TakeoverTimes `json:"takeover"`
}

// FleetRate is the calls/s of a number of daemons on one PostgreSQL.
type FleetRate struct {
	Daemons  int     `json:"daemons"`
	Rate     Rate    `json:"rate"`
	VsSQLite float64 `json:"vsSQLite"`
}

// TakeoverTimes is a SIGKILLed daemon's session served again elsewhere.
type TakeoverTimes struct {
	Calls int           `json:"calls"`
	Lease time.Duration `json:"lease"`
	// Total is from the kill to the first answer from the other daemon;
	// Replay is loading the session on a daemon that need not wait (its
	// share of Total, the rest being the lease's expiry).
	Total  time.Duration `json:"total"`
	Replay time.Duration `json:"replay"`
}

const fleetSessions = 64

// Fleet runs the fleet measurements.
func Fleet(ctx context.Context, cfg FleetConfig) (*FleetResults, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 10 * time.Second
		if cfg.Quick {
			cfg.Lease = time.Second
		}
	}
	phase := 3 * time.Second
	if cfg.Quick {
		phase = 500 * time.Millisecond
	}
	var newDB func(name string) (string, error)
	if cfg.Postgres == "" {
		srv, err := pgtest.Start(pgtest.Options{Durable: true, MaxConns: 300})
		if err != nil {
			return nil, fmt.Errorf("fleet bench: start PostgreSQL: %w", err)
		}
		defer srv.Close()
		newDB = func(name string) (string, error) { return srv.CreateDB(ctx, name) }
	} else {
		newDB = func(name string) (string, error) { return createDB(ctx, cfg.Postgres, name) }
	}
	r := &FleetResults{Machine: Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Go: runtime.Version(), CPUs: runtime.NumCPU()}, Sessions: fleetSessions, Phase: phase}

	fmt.Fprintln(cfg.Log, "fleet: one daemon on SQLite (--sync full)")
	lite, err := start(ctx, daemon.Config{DB: filepath.Join(cfg.Dir, "fleet.db"), Socket: filepath.Join(cfg.Dir, "f0.sock"), Sync: db.SyncFull, MaxConns: 256})
	if err != nil {
		return nil, err
	}
	rate, lat, err := driveFleet(ctx, []string{lite.socket}, phase)
	err = errors.Join(err, lite.stop())
	if err != nil {
		return nil, fmt.Errorf("fleet bench, SQLite: %w", err)
	}
	r.SQLite = Rate{Name: "sqlite, 1 daemon", Sync: "full", Clients: fleetSessions, PerSec: rate, Latency: lat}

	for _, n := range []int{1, 2, 4} {
		fmt.Fprintf(cfg.Log, "fleet: %d daemon(s) on PostgreSQL\n", n)
		url, err := newDB(fmt.Sprintf("fleet%d", n))
		if err != nil {
			return nil, err
		}
		var ds []*running
		var sockets []string
		for i := range n {
			d, err := start(ctx, daemon.Config{DB: url, Socket: filepath.Join(cfg.Dir, fmt.Sprintf("p%d-%d.sock", n, i)), MaxConns: 256})
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
			sockets = append(sockets, d.socket)
		}
		rate, lat, err := driveFleet(ctx, sockets, phase)
		for _, d := range ds {
			err = errors.Join(err, d.stop())
		}
		if err != nil {
			return nil, fmt.Errorf("fleet bench, %d daemons: %w", n, err)
		}
		r.Postgres = append(r.Postgres, FleetRate{Daemons: n, VsSQLite: rate / r.SQLite.PerSec,
			Rate: Rate{Name: fmt.Sprintf("postgres, %d daemon(s)", n), Sync: "synchronous_commit on", Clients: fleetSessions, PerSec: rate, Latency: lat}})
	}

	fmt.Fprintf(cfg.Log, "fleet: takeover of a 10,000-call session after kill -9 (lease %s)\n", cfg.Lease)
	url, err := newDB("takeover")
	if err != nil {
		return nil, err
	}
	if r.Takeover, err = takeover(ctx, cfg, url); err != nil {
		return nil, fmt.Errorf("fleet bench, takeover: %w", err)
	}
	return r, nil
}

// driveFleet runs the 64-session workload, session w on daemon w mod n
// (each session served by one daemon, as a fleet serves it), and returns
// the calls/s of them all together.
func driveFleet(ctx context.Context, sockets []string, phase time.Duration) (float64, Latency, error) {
	ids := make([]string, fleetSessions)
	conns := make([]*client.Client, fleetSessions)
	for w := range conns {
		c, err := client.Dial(ctx, sockets[w%len(sockets)])
		if err != nil {
			return 0, Latency{}, err
		}
		defer c.Close()
		conns[w] = c
		s, err := c.CreateSession(ctx, wire.CreateSession{})
		if err != nil {
			return 0, Latency{}, err
		}
		ids[w] = s.ID
	}
	// Warm up first, every session at once: each daemon loads (and
	// leases) its sessions and fills its connection pool, which the
	// steady state measured below does not pay.
	warm := make([]error, len(conns))
	var wg sync.WaitGroup
	for w, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			warm[w] = callTool(ctx, c, wire.ToolCall{SessionID: ids[w], Name: "TaskList"})
		}()
	}
	wg.Wait()
	if err := errors.Join(warm...); err != nil {
		return 0, Latency{}, err
	}
	op := workload(ctx, ids)
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	begin := time.Now()
	deadline := begin.Add(phase)
	for w, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
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

// takeover loads a 10,000-call session on a daemon run as a child, kills
// it with SIGKILL, and times another daemon's first answer for it.
func takeover(ctx context.Context, cfg FleetConfig, url string) (TakeoverTimes, error) {
	const calls = 10_000
	t := TakeoverTimes{Calls: calls, Lease: cfg.Lease}
	sockA := filepath.Join(cfg.Dir, "ta.sock")
	cmd := exec.Command(cfg.Binary, "serve", "--db", url, "--socket", sockA, "--lease", cfg.Lease.String(), "--log-level", "warn")
	cmd.Stderr = cfg.Log
	if err := cmd.Start(); err != nil {
		return t, fmt.Errorf("start the daemon to kill: %w", err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}()
	a, err := dialRetry(ctx, sockA)
	if err != nil {
		return t, err
	}
	defer a.Close()
	// The session's log: 10,000 calls, written through a session manager
	// in process (one sessions/replay request of them would pass the
	// wire's 1 MiB), then loaded by the daemon to be killed, which then
	// holds the session and its lease.
	if err := seedLog(ctx, url, calls); err != nil {
		return t, err
	}
	if _, err := a.CallTool(ctx, client.ToolCall{SessionID: "takeover", Name: "TaskList"}); err != nil {
		return t, err
	}

	b, err := start(ctx, daemon.Config{DB: url, Socket: filepath.Join(cfg.Dir, "tb.sock"), Lease: cfg.Lease})
	if err != nil {
		return t, err
	}
	defer func() {
		if b != nil {
			b.stop()
		}
	}()
	cb, err := client.Dial(ctx, b.socket)
	if err != nil {
		return t, err
	}
	defer cb.Close()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killed := time.Now()
	for {
		_, err := cb.CallTool(ctx, client.ToolCall{SessionID: "takeover", Name: "TaskList"})
		if err == nil {
			break
		}
		if !errors.Is(err, client.ErrSessionLeased) || time.Since(killed) > 10*cfg.Lease+30*time.Second {
			return t, err
		}
		time.Sleep(5 * time.Millisecond) // the lease has yet to expire
	}
	t.Total = time.Since(killed)

	// The replay's share: a third daemon loads the session anew once b
	// has let it go (a clean stop gives its leases up).
	err = b.stop()
	b = nil
	if err != nil {
		return t, err
	}
	c, err := start(ctx, daemon.Config{DB: url, Socket: filepath.Join(cfg.Dir, "tc.sock"), Lease: cfg.Lease, Logger: slog.New(slog.NewTextHandler(cfg.Log, nil))})
	if err != nil {
		return t, err
	}
	defer c.stop()
	cc, err := client.Dial(ctx, c.socket)
	if err != nil {
		return t, err
	}
	defer cc.Close()
	t0 := time.Now()
	if _, err := cc.CallTool(ctx, client.ToolCall{SessionID: "takeover", Name: "TaskList"}); err != nil {
		return t, err
	}
	t.Replay = time.Since(t0)
	return t, nil
}

func seedLog(ctx context.Context, url string, calls int) error {
	d, err := pgdb.Open(ctx, url, pgdb.Options{})
	if err != nil {
		return err
	}
	defer d.Close() // gives the lease up
	_, err = session.NewManager(d, nil).Replay(ctx, wire.ReplaySession{SessionID: "takeover", Calls: transcript(calls, 1000)})
	return err
}

func dialRetry(ctx context.Context, socket string) (*client.Client, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := client.Dial(ctx, socket)
		if err == nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(10 * time.Millisecond) // the daemon is starting
	}
}

// createDB makes a database on the server at url for one phase.
func createDB(ctx context.Context, url, name string) (string, error) {
	return pgtest.CreateDBAt(ctx, url, fmt.Sprintf("tsd_bench_%s_%d", name, os.Getpid()))
}

// PrintFleet writes a fleet run's figures as a table.
func PrintFleet(w io.Writer, r *FleetResults) {
	fmt.Fprintf(w, "Fleet mode: %d sessions, one client each, %s per phase, durable commits (%s/%s, %d CPUs)\n",
		r.Sessions, r.Phase, r.Machine.GOOS, r.Machine.GOARCH, r.Machine.CPUs)
	fmt.Fprintf(w, "  %-34s %10s %10s %10s %8s\n", "", "calls/s", "p50", "p99", "ratio")
	fmt.Fprintf(w, "  %-34s %10.0f %10s %10s %8s\n", "SQLite, 1 daemon, --sync full", r.SQLite.PerSec, us(r.SQLite.Latency.P50), us(r.SQLite.Latency.P99), "1.00")
	for _, p := range r.Postgres {
		fmt.Fprintf(w, "  %-34s %10.0f %10s %10s %8.2f\n", fmt.Sprintf("PostgreSQL, %d daemon(s)", p.Daemons), p.Rate.PerSec, us(p.Rate.Latency.P50), us(p.Rate.Latency.P99), p.VsSQLite)
	}
	fmt.Fprintf(w, "Takeover after kill -9 of a %d-call session's daemon (--lease %s): %s to the first answer elsewhere, of which replay %s\n",
		r.Takeover.Calls, r.Takeover.Lease, ms(r.Takeover.Total), ms(r.Takeover.Replay))
}
