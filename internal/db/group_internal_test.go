package db

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendHonoursContextBeforeHandOver(t *testing.T) {
	// Ensures a caller whose context ends before the writer takes its
	// request (here the writer never does) stops waiting with that error.
	d := &DB{appends: make(chan *appendReq), closed: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, d.AppendCalls(ctx, nil), context.DeadlineExceeded)
}

func TestCheckpointFailuresAreLogged(t *testing.T) {
	// Ensures a failing checkpoint is logged once (not every 250 ms), and
	// its recovery too.
	var logs strings.Builder
	d, err := Open(context.Background(), filepath.Join(t.TempDir(), "k.db"), Options{Sync: SyncNormal, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer d.Close()
	var w ckptWatch
	failing, cancel := context.WithCancel(context.Background())
	cancel()
	for range 3 {
		d.checkpointOnce(failing, &w)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "checkpoint failed; the WAL grows until one succeeds"))
	d.checkpointOnce(context.Background(), &w)
	assert.Contains(t, logs.String(), "checkpoints succeed again")
}
