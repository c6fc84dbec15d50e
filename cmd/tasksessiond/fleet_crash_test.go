package main_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/crashtest"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
)

func TestFleetCrashHarness(t *testing.T) {
	// Ensures, in fleet mode (two daemons on one PostgreSQL), that when the
	// daemon serving 8 sessions under load is SIGKILLed the other takes them
	// over once their leases expire, with nothing acknowledged lost or
	// doubled, a call in flight at the kill applied once when retried
	// there by callId, and every store and the tasks view equal to the
	// model; four kills, each daemon killed in its turn.
	// `go run ./cmd/crashtest --postgres URL --cycles 100` runs a long one.
	srv := fleetServer(t)
	url, err := srv.CreateDB(context.Background(), "crash")
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "tsdf")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	seed := uint64(time.Now().UnixNano())
	r, err := crashtest.Run(context.Background(), crashtest.Config{Binary: binary, Dir: dir, Cycles: 4, Clients: 8, Seed: seed,
		MaxRun: 250 * time.Millisecond, Postgres: url, Lease: 600 * time.Millisecond})
	require.NoError(t, err, "seed %d", seed)
	t.Logf("seed %d: %+v", seed, r)
	assert.True(t, r.OK(), "%+v", r)
	assert.Equal(t, 4, r.Takeovers)
	assert.Positive(t, r.Acknowledged)
	assert.Positive(t, r.Retried)
	assert.GreaterOrEqual(t, r.TakeoverMaxMs, int64(300), "a takeover waits for the lease to expire")
}

func TestFleetCrashHarnessPause(t *testing.T) {
	// Ensures, in fleet mode, that when the daemon serving 8 sessions under
	// load is SIGSTOPped past its lease, the other takes them over with
	// nothing acknowledged lost or doubled, and that once the paused one
	// runs again, no read it answers (sent while it was stopped, after the
	// takeover's writes were acknowledged) is stale; each daemon paused in
	// its turn, three times.
	srv := fleetServer(t)
	url, err := srv.CreateDB(context.Background(), "pause")
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "tsdp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	seed := uint64(time.Now().UnixNano())
	r, err := crashtest.Run(context.Background(), crashtest.Config{Binary: binary, Dir: dir, Cycles: 3, Clients: 8, Seed: seed,
		MaxRun: 250 * time.Millisecond, Postgres: url, Lease: 600 * time.Millisecond, Fault: crashtest.FaultPause})
	require.NoError(t, err, "seed %d", seed)
	t.Logf("seed %d: %+v", seed, r)
	assert.True(t, r.OK(), "%+v", r)
	assert.Equal(t, 3, r.Pauses)
	assert.Equal(t, 3*8, r.PausedReads)
	assert.Zero(t, r.Stale)
}

func TestFleetFaultTable(t *testing.T) {
	// The fault table for docs/FLEET.md: each fault for many cycles. Long;
	// run with TASKSESSIOND_FAULT_TABLE=cycles (e.g. 30).
	cycles, _ := strconv.Atoi(os.Getenv("TASKSESSIOND_FAULT_TABLE"))
	if cycles <= 0 {
		t.Skip("set TASKSESSIOND_FAULT_TABLE=cycles to build the fault table")
	}
	srv := pgtest.StartFor(t, pgtest.Options{Durable: true})
	t.Log("| fault | rounds | acknowledged | lost | doubled | stale | reads at the paused daemon (refused) | longest takeover |")
	t.Log("|---|---:|---:|---:|---:|---:|---:|---:|")
	faults := []string{crashtest.FaultKill, crashtest.FaultPause}
	if f := os.Getenv("TASKSESSIOND_FAULT"); f != "" {
		faults = []string{f}
	}
	var logw io.Writer
	if testing.Verbose() {
		logw = os.Stderr
	}
	for _, fault := range faults {
		url, err := srv.CreateDB(context.Background(), "table"+fault)
		require.NoError(t, err)
		dir, err := os.MkdirTemp("", "tsdt")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		seed := uint64(time.Now().UnixNano())
		r, err := crashtest.Run(context.Background(), crashtest.Config{Binary: binary, Dir: dir, Cycles: cycles, Clients: 8, Seed: seed,
			MaxRun: 300 * time.Millisecond, Postgres: url, Lease: time.Second, Fault: fault, Log: logw})
		require.NoError(t, err, "seed %d", seed)
		assert.True(t, r.OK(), "%+v", r)
		t.Logf("| %s | %d | %d | %d | %d | %d | %d (%d) | %d ms |", fault, r.Cycles, r.Acknowledged, r.Lost, r.Doubled, r.Stale, r.PausedReads, r.PausedRefused, r.TakeoverMaxMs)
	}
}
