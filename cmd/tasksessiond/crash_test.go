package main_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/crashtest"
)

func TestCrashHarness(t *testing.T) {
	// Ensures, over SIGKILL/restart cycles with 16 concurrent sessions of
	// random valid and invalid calls and compactions, that nothing
	// acknowledged is lost or doubled and every store equals the model.
	// Cycles: 8 (the go test -race ./... budget; each seed is new, so runs
	// add up), or TASKSESSIOND_CRASH_CYCLES, which .ci/run sets to 20.
	// `go run ./cmd/crashtest --cycles 1000` runs the long version.
	cycles := 8
	if v := os.Getenv("TASKSESSIOND_CRASH_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "TASKSESSIOND_CRASH_CYCLES")
		cycles = n
	}
	dir, err := os.MkdirTemp("", "tsdc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	seed := uint64(time.Now().UnixNano())
	r, err := crashtest.Run(context.Background(), crashtest.Config{Binary: binary, Dir: dir, Cycles: cycles, Clients: 16, Seed: seed, MaxRun: 250 * time.Millisecond})
	require.NoError(t, err, "seed %d", seed)
	t.Logf("seed %d: %+v", seed, r)
	assert.True(t, r.OK(), "%+v", r)
	assert.Equal(t, cycles, r.Cycles)
	assert.Positive(t, r.Acknowledged)
	assert.Positive(t, r.InFlight, "calls were in flight at the kills")
	assert.Positive(t, r.Retried)
}
