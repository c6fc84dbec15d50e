package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/store"
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

func TestAStalledWriterIsNoPauseInTheWrites(t *testing.T) {
	// Ensures the projector, which holds up the commits while it runs,
	// does not take a stall of the writer's own (here a RESTART checkpoint
	// waiting for a reader that pins the WAL) for a pause in the writes:
	// while a call waits to be committed, it waits too. After the stall the
	// writer's select finds both ready and picks at random, so without the
	// check each of its ten rounds projects early half the time.
	defer func(w time.Duration) { walWait = w }(walWait)
	walWait = 250 * time.Millisecond // the stall, against a pause of 50 ms
	ctx := context.Background()
	for round := range 10 {
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.db")
			d, err := Open(ctx, path, Options{Sync: SyncNormal, ProjectInterval: 5 * time.Second, WALLimit: 1})
			require.NoError(t, err)
			defer d.Close()
			require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
			raw, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			defer raw.Close()
			// Every move of the projection's mark, as the projector makes it.
			_, err = raw.Exec(`CREATE TABLE marks (through INTEGER NOT NULL);
				CREATE TRIGGER mark_moved AFTER UPDATE ON projection_state BEGIN INSERT INTO marks VALUES (NEW.through_rowid); END`)
			require.NoError(t, err)
			pin, err := raw.Begin() // a sqlite3 shell left inside a transaction
			require.NoError(t, err)
			defer pin.Rollback()
			var n int
			require.NoError(t, pin.QueryRow(`SELECT count(*) FROM tool_calls`).Scan(&n))

			appendTask := func(seq int64) {
				task := store.Task{Taskid: int(seq), Status: store.Pending, Subject: "t"}
				require.NoError(t, d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: "s", Seq: seq, Name: "TaskCreate",
					Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}, Task: &task, SetSubject: true}}))
			}
			appendTask(1) // answered, then the writer's RESTART waits for the reader
			appendTask(2) // waits for the writer meanwhile
			require.NoError(t, pin.Rollback())

			var last int64
			require.NoError(t, raw.QueryRow(`SELECT max(rowid) FROM tool_calls`).Scan(&last))
			require.Eventually(t, func() bool {
				var through sql.NullInt64
				err := raw.QueryRow(`SELECT max(through) FROM marks`).Scan(&through)
				return err == nil && through.Int64 == last
			}, 10*time.Second, 10*time.Millisecond, "projected once the writes paused")
			var early int
			require.NoError(t, raw.QueryRow(`SELECT count(*) FROM marks WHERE through < ?`, last).Scan(&early))
			assert.Zero(t, early, "projected while a call waited to be committed")
		})
	}
}
