package db_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/migrations"
)

var ctx = context.Background()

func TestOpen(t *testing.T) {
	// Ensures the file is created 0600 in a 0700 directory, in WAL mode, with
	// foreign keys on, and that reopening runs no migration twice.
	path := filepath.Join(t.TempDir(), "state", "x.db")
	d := testutil.MustOpenDBAt(t, path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())

	raw := testutil.RawDB(t, path)
	var mode string
	require.NoError(t, raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
	// Pages are read through a memory map, not a read(2) each: a daemon
	// just started loads a long session from an empty page cache.
	w, err := sql.Open("sqlite", db.WriterDSN(path, db.Options{}))
	require.NoError(t, err)
	defer w.Close()
	var mmap int64
	require.NoError(t, w.QueryRow(`PRAGMA mmap_size`).Scan(&mmap))
	assert.EqualValues(t, 256<<20, mmap)
	d.Close()
	testutil.MustOpenDBAt(t, path) // migrations already applied: no error
	var versions, files int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&versions))
	entries, err := migrations.FS.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			files++
		}
	}
	assert.Equal(t, files, versions, "each migration applied once")
}

func TestParseSync(t *testing.T) {
	for _, ok := range []string{"full", "normal"} {
		_, err := db.ParseSync(ok)
		assert.NoError(t, err)
	}
	_, err := db.ParseSync("off")
	assert.Error(t, err)
}

func TestAppendIsAtomic(t *testing.T) {
	// Ensures a batch with one bad row writes nothing, the projection included.
	d := testutil.MustOpenDB(t)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	task := store.Task{Taskid: 1, Status: store.Pending, Subject: "a"}
	row := func(seq int64, callID string) record.Append {
		return record.Append{Call: record.Call{SessionID: "s", Seq: seq, CallID: callID, Name: "TaskCreate", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}, Task: &task, SetSubject: true, SetDescription: true}
	}
	require.NoError(t, d.AppendCalls(ctx, []record.Append{row(1, "c1")}))
	s, err := d.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.True(t, s.UpdatedAt.After(s.CreatedAt), "a call stamps the session's updated_at")
	err = d.AppendCalls(ctx, []record.Append{row(2, "c2"), row(2, "c3")}) // seq reused
	assert.ErrorIs(t, err, db.ErrExists)
	calls, err := d.Calls(ctx, "s")
	require.NoError(t, err)
	assert.Len(t, calls, 1, "neither row of the failed batch was written")

	err = d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: "ghost", Seq: 1, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}})
	assert.Error(t, err, "a row for a session that does not exist violates the foreign key")
}

func TestSessions(t *testing.T) {
	d := testutil.MustOpenDB(t)
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, d.CreateSession(ctx, &record.Session{ID: id, Title: "T " + id}))
	}
	assert.ErrorIs(t, d.CreateSession(ctx, &record.Session{ID: "a"}), db.ErrExists)
	s, err := d.GetSession(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, "T b", s.Title)
	assert.Equal(t, record.StatusActive, s.Status)
	assert.Equal(t, "2026-01-02T03:04:05", s.CreatedAt.Format("2006-01-02T15:04:05"), "times come from the injected clock")
	_, err = d.GetSession(ctx, "zz")
	assert.ErrorIs(t, err, db.ErrNotFound)

	page, next, err := d.ListSessions(ctx, db.ListFilter{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "b"}, ids(page))
	require.NotEmpty(t, next)
	page, next, err = d.ListSessions(ctx, db.ListFilter{Limit: 2, Cursor: next})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, ids(page))
	assert.Empty(t, next)
	n, err := d.CountSessions(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func TestOnlyLoadReadsTheSnapshot(t *testing.T) {
	// Ensures the snapshot, which holds a whole task list, is read only to
	// rebuild a store: records and lists leave it out.
	d := testutil.MustOpenDB(t)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "old"}))
	task := store.Task{Taskid: 1, Status: store.Completed, Subject: "carried"}
	writeTask(t, d, "old", 1, task)
	snap := store.Snapshot{Tasks: []store.Task{task}, NextTaskid: 2}
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", snap)))

	loaded, err := d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, &snap, loaded.Snapshot)
	got, err := d.GetSession(ctx, "succ")
	require.NoError(t, err)
	assert.Nil(t, got.Snapshot)
	loaded.Snapshot = nil
	assert.Equal(t, loaded, got, "the same record otherwise")
	page, _, err := d.ListSessions(ctx, db.ListFilter{})
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Equal(t, got, page[0])
	_, err = d.LoadSession(ctx, "zz")
	assert.ErrorIs(t, err, db.ErrNotFound)

	err = d.CreateSession(ctx, &record.Session{ID: "orphan", Snapshot: &snap})
	assert.ErrorContains(t, err, "made by compacting its parent", "a snapshot's tasks are its parent's")
}

// compaction is the plan of compacting old, holding snap, into newID.
func compaction(old, newID string, snap store.Snapshot) record.Compaction {
	return record.Compaction{
		Old:   old,
		New:   &record.Session{ID: newID, ParentID: old, Snapshot: &snap},
		Tasks: snap.Tasks,
		Forced: &record.Append{Call: record.Call{SessionID: newID, Seq: 1, CallID: "forced-" + newID, Name: "TaskList",
			Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`), Forced: true}},
	}
}

func ids(ss []record.Session) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func TestRefusesCorruptDatabase(t *testing.T) {
	// Ensures a corrupt file is reported clearly and left exactly as it was.
	path := filepath.Join(t.TempDir(), "bad.db")
	garbage := []byte("this is not a database, but it is somebody's file\n")
	for len(garbage) < 8192 {
		garbage = append(garbage, garbage...)
	}
	require.NoError(t, os.WriteFile(path, garbage, 0o600))
	_, err := db.Open(ctx, path, db.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is corrupt or is not a SQLite database")
	assert.Contains(t, err.Error(), "refusing to run on it")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, garbage, after)
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	// Ensures that concurrent appends committed together each succeed, and
	// that one bad request in a group fails alone.
	d := testutil.MustOpenDB(t)
	const n = 64
	for i := range n {
		require.NoError(t, d.CreateSession(ctx, &record.Session{ID: fmt.Sprint("s", i)}))
	}
	row := func(sess string, seq int64) []record.Append {
		return []record.Append{{Call: record.Call{SessionID: sess, Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}
	}
	for round := int64(1); round <= 3; round++ {
		errs := make([]error, n+1)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = d.AppendCalls(ctx, row(fmt.Sprint("s", i), round)) }()
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[n] = d.AppendCalls(ctx, row("s0", 1)) }() // a duplicate seq
		wg.Wait()
		for i := range n {
			if round == 1 && i == 0 {
				continue // s0 raced its own duplicate; one of the two won
			}
			assert.NoError(t, errs[i], "s%d round %d", i, round)
		}
		if round > 1 {
			assert.ErrorIs(t, errs[n], db.ErrExists)
		}
	}
	for i := range n {
		calls, err := d.Calls(ctx, fmt.Sprint("s", i))
		require.NoError(t, err)
		assert.Len(t, calls, 3)
	}
}

func TestConcurrentAppendsShareCommits(t *testing.T) {
	// Ensures group commit: calls of many sessions arriving while a commit
	// is under way are committed together, not one transaction each. The
	// first commit is held up by another connection's write lock while the
	// rest queue. A transaction stamps its rows with one clock reading (the
	// clock advances on each), so distinct created_at values count commits.
	path := filepath.Join(t.TempDir(), "g.db")
	d := testutil.MustOpenDBAt(t, path)
	const n = 64
	for i := range n {
		require.NoError(t, d.CreateSession(ctx, &record.Session{ID: fmt.Sprint("s", i)}))
	}
	lock, err := testutil.RawDB(t, path).Conn(ctx)
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: fmt.Sprint("s", i), Seq: 1, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}})
		}()
	}
	require.Eventually(t, func() bool { return d.Pending() == n }, 10*time.Second, time.Millisecond,
		"every call is handed in while the first commit is held up")
	_, err = lock.ExecContext(ctx, "COMMIT")
	require.NoError(t, err)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "s%d", i)
	}

	stamps := map[time.Time]int{}
	for i := range n {
		calls, err := d.Calls(ctx, fmt.Sprint("s", i))
		require.NoError(t, err)
		require.Len(t, calls, 1)
		stamps[calls[0].CreatedAt]++
	}
	assert.LessOrEqual(t, len(stamps), 4, "%d calls took %d commits", n, len(stamps))
}

func TestAppendAfterClose(t *testing.T) {
	d := testutil.MustOpenDB(t)
	require.NoError(t, d.Close())
	err := d.AppendCalls(ctx, nil)
	assert.ErrorContains(t, err, "database closed")
}

func TestPinnedWALIsReported(t *testing.T) {
	// Ensures a reader that keeps the WAL from being checkpointed is logged
	// (once), and that WAL reports the log's size and what is pinned.
	path := filepath.Join(t.TempDir(), "w.db")
	var logs testutil.SyncBuffer
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, WALWarnBytes: 64 << 10,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))

	// A sqlite3 shell left inside a transaction.
	raw := testutil.RawDB(t, path)
	tx, err := raw.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	var n int
	require.NoError(t, tx.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n))

	big := json.RawMessage(`{"text":"` + strings.Repeat("x", 4000) + `"}`)
	for i := int64(1); i <= 60; i++ {
		require.NoError(t, d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: "s", Seq: i, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: big}}}))
	}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "the WAL cannot be checkpointed") },
		10*time.Second, 10*time.Millisecond)
	st := d.WAL()
	assert.Greater(t, st.Bytes, int64(64<<10))
	assert.Greater(t, st.Frames, st.Checkpointed, "the pinned frames are not checkpointed")
	assert.Equal(t, 1, strings.Count(logs.String(), "the WAL cannot be checkpointed"), "said once, not every 250 ms")

	require.NoError(t, tx.Rollback())
	require.Eventually(t, func() bool { st := d.WAL(); return st.Frames > 0 && st.Frames == st.Checkpointed },
		10*time.Second, 10*time.Millisecond, "once the reader lets go, the WAL is checkpointed")
}

func TestWALStaysBounded(t *testing.T) {
	// Ensures the WAL is emptied once past its limit under continuous
	// writes, so it stays near the limit however long the load lasts; and
	// that a reader pinning it only defers that, with the writes going on.
	path := filepath.Join(t.TempDir(), "b.db")
	const limit = 128 << 10
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, WALLimit: limit})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", 3000) + `"}`)
	seq := int64(0)
	var low int64 = math.MaxInt64 // the smallest size once it has passed half the limit
	write := func(n int) (peak int64) {
		for range n {
			seq++
			require.NoError(t, d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: "s", Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: big}}}))
			if fi, err := os.Stat(path + "-wal"); err == nil {
				peak = max(peak, fi.Size())
				if low < math.MaxInt64 || fi.Size() > limit/2 {
					low = min(low, fi.Size())
				}
			}
		}
		return peak
	}
	peak := write(500) // about 2 MiB of rows: sixteen limits' worth
	assert.LessOrEqual(t, peak, int64(2*limit), "the WAL peaked at %d bytes", peak)
	// Restarted, not truncated: commits write over frames already on disk,
	// whose fsync is cheaper than that of a file that grows.
	assert.Greater(t, low, int64(limit/2), "the WAL file was truncated under load")

	// A reader pins the WAL: it may grow, and the writes go on.
	tx, err := testutil.RawDB(t, path).Begin()
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(`SELECT count(*) FROM tool_calls`).Scan(&n))
	pinned := write(150)
	assert.Greater(t, pinned, int64(limit), "a pinned WAL cannot be emptied")
	require.NoError(t, tx.Rollback())
	// With no write after the reader lets go, the periodic checkpoint
	// still empties it (it used to stay at its peak for good).
	require.Eventually(t, func() bool {
		fi, err := os.Stat(path + "-wal")
		return err == nil && fi.Size() <= int64(limit)
	}, 10*time.Second, 10*time.Millisecond, "once the reader lets go, the WAL returns under its limit, with no write to prompt it")
	write(100)
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(2*limit), "and stays bounded under writes")
}

func TestCallsLeaveTheSessionRowAlone(t *testing.T) {
	// Ensures a logged call writes no page of the sessions table (its
	// row is not rewritten), while updated_at as read — by the daemon and
	// in the session_overview view — is the last call's time.
	path := filepath.Join(t.TempDir(), "t.db")
	d := testutil.MustOpenDBAt(t, path)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	raw := testutil.RawDB(t, path)
	var stored string
	require.NoError(t, raw.QueryRow(`SELECT updated_at FROM sessions WHERE id = 's'`).Scan(&stored))
	for seq := int64(1); seq <= 3; seq++ {
		require.NoError(t, d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: "s", Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}))
	}
	var after, overview string
	require.NoError(t, raw.QueryRow(`SELECT updated_at FROM sessions WHERE id = 's'`).Scan(&after))
	assert.Equal(t, stored, after, "the row is as it was created")

	calls, err := d.Calls(ctx, "s")
	require.NoError(t, err)
	last := calls[len(calls)-1].CreatedAt
	s, err := d.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.True(t, last.Equal(s.UpdatedAt), "updated_at is the last call's: %s vs %s", last, s.UpdatedAt)
	require.NoError(t, raw.QueryRow(`SELECT updated_at FROM session_overview WHERE id = 's'`).Scan(&overview))
	assert.Greater(t, overview, stored)
	list, _, err := d.ListSessions(ctx, db.ListFilter{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, last.Equal(list[0].UpdatedAt))

	// The same once the calls are indexed, and with a call past the mark.
	require.NoError(t, d.Project(ctx))
	list, _, err = d.ListSessions(ctx, db.ListFilter{})
	require.NoError(t, err)
	assert.True(t, last.Equal(list[0].UpdatedAt), "indexed")
	require.NoError(t, d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: "s", Seq: 4, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}))
	calls, err = d.Calls(ctx, "s")
	require.NoError(t, err)
	last = calls[len(calls)-1].CreatedAt
	list, _, err = d.ListSessions(ctx, db.ListFilter{Status: record.StatusActive})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, last.Equal(list[0].UpdatedAt), "past the mark")
	s, err = d.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.True(t, last.Equal(s.UpdatedAt))
}

func TestOneWriterAtATime(t *testing.T) {
	// Ensures a database is opened for writing by one process at a time
	// (exactly-once by callId lives in that process's memory), that the
	// lock goes with Close, and that readers open it beside the writer.
	path := filepath.Join(t.TempDir(), "l.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))

	// A second Open in this process is refused before it opens the file
	// at all (closing a descriptor would drop SQLite's locks); another
	// process meets the flock (cmd/tasksessiond's TestSecondDaemonRefused).
	_, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.ErrorIs(t, err, db.ErrLocked)
	assert.ErrorContains(t, err, "open for writing by this process already")

	ro, err := db.OpenReadOnly(ctx, path)
	require.NoError(t, err)
	got, err := ro.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, "s", got.ID)
	require.NoError(t, ro.Close())

	// The lock is on the file, whatever names it.
	link := filepath.Join(t.TempDir(), "link.db")
	require.NoError(t, os.Symlink(path, link))
	_, err = db.Open(ctx, link, db.Options{Sync: db.SyncNormal})
	require.ErrorIs(t, err, db.ErrLocked, "a symlink names the same file")
	hard := filepath.Join(filepath.Dir(path), "hard.db")
	require.NoError(t, os.Link(path, hard))
	_, err = db.Open(ctx, hard, db.Options{Sync: db.SyncNormal})
	require.ErrorIs(t, err, db.ErrLocked, "a hard link names the same file")
	wd, err := os.Getwd()
	require.NoError(t, err)
	rel, err := filepath.Rel(wd, path)
	require.NoError(t, err)
	_, err = db.Open(ctx, rel, db.Options{Sync: db.SyncNormal})
	require.ErrorIs(t, err, db.ErrLocked, "a relative path names the same file")

	require.NoError(t, d.Close())
	again, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err, "the lock went with Close")
	require.NoError(t, again.Close())

	_, err = db.OpenReadOnly(ctx, filepath.Join(t.TempDir(), "missing.db"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a reader creates nothing")
}

func TestLockTouchesNoOtherFile(t *testing.T) {
	// Ensures opening a database creates or changes no file beside it but
	// its own (-wal, -shm): "serve --db Cargo" in a Rust project must not
	// replace Cargo.lock.
	dir := t.TempDir()
	cargo := filepath.Join(dir, "Cargo.lock")
	require.NoError(t, os.WriteFile(cargo, []byte("# the user's lock file\n"), 0o644))
	d, err := db.Open(ctx, filepath.Join(dir, "Cargo"), db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	b, err := os.ReadFile(cargo)
	require.NoError(t, err)
	assert.Equal(t, "# the user's lock file\n", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"Cargo", "Cargo-wal", "Cargo-shm", "Cargo.lock"}, names)
}

func writeTask(t *testing.T, d *db.DB, sid string, seq int64, task store.Task) {
	t.Helper()
	res := `{"content":[],"structuredContent":{"task":` + string(must(json.Marshal(task))) + `},"isError":false}`
	require.NoError(t, d.AppendCalls(ctx, []record.Append{{Call: record.Call{SessionID: sid, Seq: seq, Name: "TaskCreate",
		Arguments: json.RawMessage(`{}`), Result: json.RawMessage(res)}, Task: &task, SetSubject: true, SetDescription: true}}))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestTasksViewIsExactBeforeTheProjection(t *testing.T) {
	// Ensures the tasks view shows every committed change at once, though
	// the projection is written later and in batches; and that once it is,
	// the projection holds the same.
	path := filepath.Join(t.TempDir(), "p.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	raw := testutil.RawDB(t, path)
	a := store.Task{Taskid: 1, Status: store.Pending, Subject: "a"}
	writeTask(t, d, "s", 1, a)
	a.Status = store.Completed
	writeTask(t, d, "s", 2, a)
	b := store.Task{Taskid: 2, Status: store.Pending, Subject: "b", Description: "d"}
	writeTask(t, d, "s", 3, b)

	got, err := d.Tasks(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{a, b}, got, "exact before any projection")
	var projected int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM task_projection`).Scan(&projected))
	assert.Zero(t, projected, "nothing projected yet: the commits wrote log rows only")

	require.NoError(t, d.Project(ctx))
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM task_projection WHERE session_id = 's'`).Scan(&projected))
	assert.Equal(t, 2, projected)
	var seq int64
	require.NoError(t, raw.QueryRow(`SELECT projected_seq FROM sessions WHERE id = 's'`).Scan(&seq))
	assert.EqualValues(t, 3, seq)
	got, err = d.Tasks(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{a, b}, got)
	counts, err := d.TaskCounts(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, store.Counts{Total: 2, Pending: 1, Completed: 1}, counts)
}

func TestProjectionCatchesUpAfterACrash(t *testing.T) {
	// Ensures calls a daemon logged but never projected (it was killed)
	// are projected when the database is next opened, and the view is
	// exact throughout.
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	writeTask(t, d, "s", 1, store.Task{Taskid: 1, Status: store.Pending, Subject: "a"})
	require.NoError(t, d.Close()) // a clean stop projects

	// What a killed daemon leaves: a committed row, not projected.
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid, status, subject, description) VALUES
		('s', 2, 'TaskUpdate', '{}', '{}', '2026-01-01T00:00:00.000000Z', 1, 'completed', NULL, NULL),
		('s', 3, 'TaskCreate', '{}', '{}', '2026-01-01T00:00:01.000000Z', 2, 'pending', 'b', ''),
		('s', 4, 'TaskList', '{}', '{"structuredContent":{"tasks":[]}}', '2026-01-01T00:00:02.000000Z', NULL, NULL, NULL, NULL),
		('s', 5, 'TaskUpdate', '{}', '{}', '2026-01-01T00:00:03.000000Z', 2, 'inprogress', NULL, NULL)`)
	require.NoError(t, err)
	rows := func(table string) []string {
		r, err := raw.Query(`SELECT taskid || ' ' || status || ' ' || created_at || ' ' || updated_at FROM ` + table + ` WHERE session_id = 's' ORDER BY taskid`)
		require.NoError(t, err)
		defer r.Close()
		var out []string
		for r.Next() {
			var row string
			require.NoError(t, r.Scan(&row))
			out = append(out, row)
		}
		return out
	}
	viewed := rows("tasks")
	var status string
	require.NoError(t, raw.QueryRow(`SELECT status FROM tasks WHERE session_id = 's' AND taskid = 1`).Scan(&status))
	assert.Equal(t, "completed", status, "the view is exact before the catch-up")
	require.NoError(t, raw.QueryRow(`SELECT status FROM task_projection WHERE session_id = 's' AND taskid = 1`).Scan(&status))
	assert.Equal(t, "pending", status)

	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Project(ctx)) // the catch-up ran before the writer took anything
	require.NoError(t, raw.QueryRow(`SELECT status FROM task_projection WHERE session_id = 's' AND taskid = 1`).Scan(&status))
	assert.Equal(t, "completed", status)
	assert.Equal(t, viewed, rows("task_projection"), "the catch-up writes what the view showed, times included")
	var projected int64
	require.NoError(t, raw.QueryRow(`SELECT projected_seq FROM sessions WHERE id = 's'`).Scan(&projected))
	assert.EqualValues(t, 5, projected)
	var mark, last int64
	require.NoError(t, raw.QueryRow(`SELECT through_rowid FROM projection_state`).Scan(&mark))
	require.NoError(t, raw.QueryRow(`SELECT max(rowid) FROM tool_calls`).Scan(&last))
	assert.Equal(t, last, mark)
}

// schemaAt opens the database at path (made if missing) as the migrations
// up to version leave it, the way an older daemon wrote it.
func schemaAt(t *testing.T, path string, version int64) (*sql.DB, *goose.Provider) {
	t.Helper()
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`PRAGMA journal_mode = WAL`)
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, migrations.FS)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, version)
	require.NoError(t, err)
	return raw, p
}

func TestMigrationCarriesTheProjectionForward(t *testing.T) {
	// Ensures a database written by the previous schema (a synchronous
	// tasks table, up to date with the log) opens with its tasks intact:
	// the same rows through the tasks view, nothing left to catch up.
	path := filepath.Join(t.TempDir(), "old.db")
	raw, _ := schemaAt(t, path, 4)
	_, err := raw.Exec(`
		INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z');
		INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at) VALUES
			('old', 1, 'TaskCreate', '{"subject":"a"}', '{"structuredContent":{"task":{"taskid":1,"status":"pending","subject":"a","description":""}}}', '2026-01-01T00:00:01.000000Z'),
			('old', 2, 'TaskUpdate', '{"taskid":1,"status":"completed"}', '{"structuredContent":{"task":{"taskid":1,"status":"completed","subject":"a","description":""}}}', '2026-01-01T00:00:02.000000Z');
		INSERT INTO tasks (session_id, taskid, status, subject, description, created_at, updated_at) VALUES
			('old', 1, 'completed', 'a', '', '2026-01-01T00:00:01.000000Z', '2026-01-01T00:00:02.000000Z');`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	got, err := d.Tasks(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{{Taskid: 1, Status: store.Completed, Subject: "a"}}, got)
	check := testutil.RawDB(t, path)
	var projected, mark int64
	require.NoError(t, check.QueryRow(`SELECT projected_seq FROM sessions WHERE id = 'old'`).Scan(&projected))
	require.NoError(t, check.QueryRow(`SELECT through_rowid FROM projection_state`).Scan(&mark))
	assert.EqualValues(t, 2, projected)
	assert.EqualValues(t, 2, mark)
}

func TestSnapshotIsProjectedAfterACrash(t *testing.T) {
	// Ensures a successor whose first tasks a killed daemon never copied
	// into task_projection shows them through the view meanwhile, and gets
	// them when the database is next opened.
	path := filepath.Join(t.TempDir(), "s.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "old"}))
	a := store.Task{Taskid: 1, Status: store.Completed, Subject: "a"}
	b := store.Task{Taskid: 2, Status: store.Pending, Subject: "b"}
	writeTask(t, d, "old", 1, a)
	writeTask(t, d, "old", 2, b)
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", store.Snapshot{Tasks: []store.Task{a, b}, NextTaskid: 3})))
	require.NoError(t, d.Close())

	// What a daemon killed right after the compaction leaves.
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`DELETE FROM task_projection WHERE session_id = 'succ'; UPDATE snapshots SET projected = 0`)
	require.NoError(t, err)
	var viewed int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM tasks WHERE session_id = 'succ'`).Scan(&viewed))
	assert.Equal(t, 2, viewed, "the view reads the parent's projection meanwhile")

	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Project(ctx))
	var projected int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM task_projection WHERE session_id = 'succ'`).Scan(&projected))
	assert.Equal(t, 2, projected)
	got, err := d.Tasks(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{a, b}, got)
}

func TestSnapshotIsProjectedWithoutFurtherWrites(t *testing.T) {
	// Ensures the projector copies a successor's first tasks soon after
	// its compaction even if nothing is written after it, but not at once:
	// a snapshot waits ten times the pause a change waits for (a long
	// list's copy would take a core from the compaction's reply).
	path := filepath.Join(t.TempDir(), "w.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: 5 * time.Second})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "old"}))
	a := store.Task{Taskid: 1, Status: store.Pending, Subject: "a"}
	writeTask(t, d, "old", 1, a)
	require.NoError(t, d.Project(ctx)) // nothing else waits for the projector
	start := time.Now()
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", store.Snapshot{Tasks: []store.Task{a}, NextTaskid: 2})))
	raw := testutil.RawDB(t, path)
	succ := func() int {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT count(*) FROM task_projection WHERE session_id = 'succ'`).Scan(&n))
		return n
	}
	time.Sleep(150 * time.Millisecond) // three times a change's pause
	if time.Since(start) < 400*time.Millisecond {
		assert.Zero(t, succ(), "a snapshot waits for a pause of 500 ms")
	}
	assert.Eventually(t, func() bool { return succ() == 1 }, 5*time.Second, 5*time.Millisecond)
}

func TestMigrationMovesTheSnapshots(t *testing.T) {
	// Ensures a database of the previous schema, whose successors hold
	// their snapshots in the sessions row and their tasks in the
	// projection, opens with both where this one reads them; and that
	// migrating back down gives the previous schema a successor's tasks
	// the projector had not copied yet.
	path := filepath.Join(t.TempDir(), "old.db")
	raw, _ := schemaAt(t, path, 5)
	const at = "2026-01-01T00:00:00.000000Z"
	snap := `{"tasks":[{"taskid":1,"status":"pending","subject":"a","description":""}],"nextTaskid":2}`
	_, err := raw.Exec(`
		INSERT INTO sessions (id, status, successor_id, created_at, updated_at, projected_seq) VALUES ('old', 'compacted', NULL, ?1, ?1, 1);
		INSERT INTO sessions (id, parent_id, snapshot, created_at, updated_at) VALUES ('succ', 'old', ?2, ?1, ?1);
		UPDATE sessions SET successor_id = 'succ' WHERE id = 'old';
		INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid) VALUES
			('old', 1, 'TaskCreate', '{"subject":"a"}', '{"structuredContent":{"task":{"taskid":1,"status":"pending","subject":"a","description":""}}}', ?1, 1);
		INSERT INTO task_projection (session_id, taskid, status, subject, description, created_at, updated_at) VALUES
			('old', 1, 'pending', 'a', '', ?1, ?1), ('succ', 1, 'pending', 'a', '', ?1, ?1);`, at, snap)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	loaded, err := d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, &store.Snapshot{Tasks: []store.Task{{Taskid: 1, Status: store.Pending, Subject: "a"}}, NextTaskid: 2}, loaded.Snapshot)
	got, err := d.Tasks(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{{Taskid: 1, Status: store.Pending, Subject: "a"}}, got)
	// A compaction the projector has not caught up with, then back down.
	require.NoError(t, d.Compact(ctx, compaction("succ", "third", store.Snapshot{Tasks: got, NextTaskid: 2})))
	require.NoError(t, d.Close()) // projects; undo that to test the way down
	raw, p := schemaAt(t, path, 7)
	_, err = raw.Exec(`DELETE FROM task_projection WHERE session_id = 'third'; UPDATE snapshots SET projected = 0 WHERE session_id = 'third'`)
	require.NoError(t, err)
	_, err = p.DownTo(ctx, 5)
	require.NoError(t, err)
	var subject, back string
	require.NoError(t, raw.QueryRow(`SELECT subject FROM tasks WHERE session_id = 'third' AND taskid = 1`).Scan(&subject))
	assert.Equal(t, "a", subject)
	require.NoError(t, raw.QueryRow(`SELECT snapshot FROM sessions WHERE id = 'third'`).Scan(&back))
	assert.JSONEq(t, snap, back)
}

func TestSuccessorStartsFromItsParentsProjection(t *testing.T) {
	// Ensures a compaction stores no second copy of the list: the
	// successor's snapshot is NULL, and loading it (as replay and fsck
	// do) gives its parent's projection as sealed, whether or not the
	// successor's first tasks are projected yet, and an empty list from an
	// empty parent.
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "old"}))
	a := store.Task{Taskid: 1, Status: store.Completed, Subject: "a", Description: "first"}
	b := store.Task{Taskid: 2, Status: store.Pending, Subject: "b"}
	writeTask(t, d, "old", 1, a)
	writeTask(t, d, "old", 2, b)
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", store.Snapshot{Tasks: []store.Task{a, b}, NextTaskid: 3})))
	raw := testutil.RawDB(t, path)
	var stored sql.NullString
	require.NoError(t, raw.QueryRow(`SELECT snapshot FROM snapshots WHERE session_id = 'succ'`).Scan(&stored))
	assert.False(t, stored.Valid, "no JSON copy of the list: %q", stored.String)

	want := &store.Snapshot{Tasks: []store.Task{a, b}, NextTaskid: 3}
	loaded, err := d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, want, loaded.Snapshot, "not projected yet")
	require.NoError(t, d.Project(ctx))
	loaded, err = d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, want, loaded.Snapshot, "projected")
	plain, err := d.LoadSession(ctx, "old")
	require.NoError(t, err)
	assert.Nil(t, plain.Snapshot, "a session made by create has none")

	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "empty"}))
	require.NoError(t, d.Compact(ctx, compaction("empty", "empty2", store.Snapshot{NextTaskid: 1})))
	loaded, err = d.LoadSession(ctx, "empty2")
	require.NoError(t, err)
	assert.Equal(t, &store.Snapshot{NextTaskid: 1}, loaded.Snapshot)
}

func TestCompactRefusesAProjectionThatDiffersFromTheStore(t *testing.T) {
	// Ensures a compaction whose store (what the model is shown) and
	// projection (what the successor is loaded from) disagree, with the
	// same count, is refused and changes nothing.
	for _, tamper := range []string{
		`UPDATE task_projection SET subject = 'tampered' WHERE session_id = 'old' AND taskid = 1`,
		`UPDATE task_projection SET status = 'completed' WHERE session_id = 'old' AND taskid = 2`,
		`UPDATE task_projection SET description = 'x' WHERE session_id = 'old' AND taskid = 1`,
	} {
		t.Run(tamper, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.db")
			d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
			require.NoError(t, err)
			defer d.Close()
			require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "old"}))
			a := store.Task{Taskid: 1, Status: store.Pending, Subject: "a"}
			b := store.Task{Taskid: 2, Status: store.InProgress, Subject: "b", Description: "d"}
			writeTask(t, d, "old", 1, a)
			writeTask(t, d, "old", 2, b)
			require.NoError(t, d.Project(ctx))
			_, err = testutil.RawDB(t, path).Exec(tamper)
			require.NoError(t, err)

			err = d.Compact(ctx, compaction("old", "succ", store.Snapshot{Tasks: []store.Task{a, b}, NextTaskid: 3}))
			require.ErrorContains(t, err, "the tasks projection (2 tasks) differs from the store (2): run tasksessiond fsck")
			old, err := d.GetSession(ctx, "old")
			require.NoError(t, err)
			assert.Equal(t, record.StatusActive, old.Status)
			_, err = d.GetSession(ctx, "succ")
			assert.ErrorIs(t, err, db.ErrNotFound)
		})
	}
}

func TestMigrationKeepsTheJSONSnapshots(t *testing.T) {
	// Ensures a successor made before the snapshot became optional keeps
	// its JSON and loads from it, beside one made after (NULL); and that
	// migrating back down writes the JSON the previous schema needs.
	path := filepath.Join(t.TempDir(), "old.db")
	raw, p := schemaAt(t, path, 8)
	const at = "2026-01-01T00:00:00.000000Z"
	snap := `{"tasks":[{"taskid":1,"status":"pending","subject":"a","description":"d"}],"nextTaskid":2}`
	_, err := raw.Exec(`
		INSERT INTO sessions (id, status, created_at, updated_at, projected_seq) VALUES ('old', 'compacted', ?1, ?1, 1);
		INSERT INTO sessions (id, parent_id, created_at, updated_at) VALUES ('succ', 'old', ?1, ?1);
		UPDATE sessions SET successor_id = 'succ' WHERE id = 'old';
		INSERT INTO snapshots (session_id, snapshot, projected) VALUES ('succ', ?2, 1);
		INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid, status, subject, description) VALUES
			('old', 1, 'TaskCreate', '{"subject":"a","description":"d"}', '{}', ?1, 1, 'pending', 'a', 'd');
		INSERT INTO task_projection (session_id, taskid, status, subject, description, created_at, updated_at) VALUES
			('old', 1, 'pending', 'a', 'd', ?1, ?1), ('succ', 1, 'pending', 'a', 'd', ?1, ?1);`, at, snap)
	require.NoError(t, err)

	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	var kept string
	require.NoError(t, raw.QueryRow(`SELECT snapshot FROM snapshots WHERE session_id = 'succ'`).Scan(&kept))
	assert.Equal(t, snap, kept)
	task := store.Task{Taskid: 1, Status: store.Pending, Subject: "a", Description: "d"}
	loaded, err := d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, &store.Snapshot{Tasks: []store.Task{task}, NextTaskid: 2}, loaded.Snapshot)
	require.NoError(t, d.Compact(ctx, compaction("succ", "third", store.Snapshot{Tasks: []store.Task{task}, NextTaskid: 2})))
	got, err := d.Tasks(ctx, "third")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{task}, got, "the views read the rebuilt table")
	require.NoError(t, d.Close())

	_, err = p.DownTo(ctx, 8)
	require.NoError(t, err)
	var back string
	require.NoError(t, raw.QueryRow(`SELECT snapshot FROM snapshots WHERE session_id = 'third'`).Scan(&back))
	assert.JSONEq(t, snap, back)
	require.NoError(t, raw.QueryRow(`SELECT snapshot FROM snapshots WHERE session_id = 'succ'`).Scan(&kept))
	assert.Equal(t, snap, kept)
}

func TestCreatedAtIsTheFirstChange(t *testing.T) {
	// Ensures a task created and changed within one projection interval
	// reads as created at its first change, through the view before the
	// projection and in the projection after it: both say the same.
	path := filepath.Join(t.TempDir(), "t.db")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour, Now: func() time.Time {
		clock = clock.Add(time.Second)
		return clock
	}})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	a := store.Task{Taskid: 1, Status: store.Pending, Subject: "a"}
	writeTask(t, d, "s", 1, a)
	a.Status = store.Completed
	writeTask(t, d, "s", 2, a)
	raw := testutil.RawDB(t, path)
	var first string
	require.NoError(t, raw.QueryRow(`SELECT created_at FROM tool_calls WHERE session_id = 's' AND seq = 1`).Scan(&first))
	times := func(table string) (created, updated string) {
		require.NoError(t, raw.QueryRow(`SELECT created_at, updated_at FROM `+table+` WHERE session_id = 's' AND taskid = 1`).Scan(&created, &updated))
		return created, updated
	}
	created, updated := times("tasks")
	assert.Equal(t, first, created, "the view: created at the first change")
	assert.Greater(t, updated, created)
	require.NoError(t, d.Project(ctx))
	pc, pu := times("task_projection")
	assert.Equal(t, created, pc, "the projection agrees with the view")
	assert.Equal(t, updated, pu)
}

func TestHeaderMarksTheFileAsOurs(t *testing.T) {
	// Ensures a database this daemon made carries its application_id in
	// the SQLite header once opened, so the next open knows it as its own
	// from 100 bytes.
	path := filepath.Join(t.TempDir(), "h.db")
	d, err := db.Open(ctx, path, db.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	header := make([]byte, 100)
	_, err = io.ReadFull(f, header)
	require.NoError(t, err)
	assert.Equal(t, "SQLite format 3\x00", string(header[:16]))
	assert.Equal(t, "TSKD", string(header[68:72]))
	d, err = db.Open(ctx, path, db.Options{})
	require.NoError(t, err, "and opens again")
	require.NoError(t, d.Close())
}

func TestRefusesAnotherProgramsDatabaseOfViewsOnly(t *testing.T) {
	// Ensures a SQLite file of another program's is refused even when it
	// holds no table (only views): it is not migrated, and its header's
	// application_id is left as it was.
	path := filepath.Join(t.TempDir(), "views.db")
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`PRAGMA application_id = 42; CREATE VIEW answer AS SELECT 42 AS n`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	_, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "made by another program (it holds answer)")
	raw = testutil.RawDB(t, path)
	var id int
	require.NoError(t, raw.QueryRow(`PRAGMA application_id`).Scan(&id))
	assert.Equal(t, 42, id, "the header is untouched")
	var n int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'goose_db_version'`).Scan(&n))
	assert.Zero(t, n, "not migrated")
}

func TestProjectorWaitsForAPause(t *testing.T) {
	// Ensures the projector stays off the writer while writes keep coming
	// and brings the projection up to date once they pause (a hundredth of
	// ProjectInterval), the tasks view being exact throughout.
	path := filepath.Join(t.TempDir(), "p.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: 20 * time.Second})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	raw := testutil.RawDB(t, path)
	projectedRows := func() int {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT count(*) FROM task_projection WHERE session_id = 's'`).Scan(&n))
		return n
	}
	for i := range 20 {
		writeTask(t, d, "s", int64(i+1), store.Task{Taskid: i + 1, Status: store.Pending, Subject: fmt.Sprint("t", i)})
	}
	assert.Zero(t, projectedRows(), "no projection between writes less than 200 ms apart")
	got, err := d.Tasks(ctx, "s")
	require.NoError(t, err)
	assert.Len(t, got, 20, "the view is exact meanwhile")
	assert.Eventually(t, func() bool { return projectedRows() == 20 }, 5*time.Second, 20*time.Millisecond, "projected once the writes paused")
}

func TestProjectorBoundsEachSessionsTail(t *testing.T) {
	// Ensures that under writes that never pause the projector runs once
	// one session has 1,024 changes waiting (the tasks view reads a
	// session's tail once per projected task), but not for as many changes
	// spread over sessions: each run holds up the commits.
	path := filepath.Join(t.TempDir(), "p.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	defer d.Close()
	raw := testutil.RawDB(t, path)
	projected := func() int {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT count(*) FROM task_projection`).Scan(&n))
		return n
	}
	for _, sid := range []string{"a", "b", "c"} {
		require.NoError(t, d.CreateSession(ctx, &record.Session{ID: sid}))
	}
	for i := range 600 {
		for _, sid := range []string{"a", "b"} {
			writeTask(t, d, sid, int64(i+1), store.Task{Taskid: i + 1, Status: store.Pending, Subject: fmt.Sprint("t", i)})
		}
	}
	assert.Zero(t, projected(), "1,200 changes over two sessions wait for a pause")
	for i := range 1024 {
		writeTask(t, d, "c", int64(i+1), store.Task{Taskid: i%10 + 1, Status: store.Pending, Subject: fmt.Sprint("t", i)})
	}
	// The run follows the commit that made the 1,024th change, after its
	// caller has its answer; the pause that would also run it is 36 s.
	assert.Eventually(t, func() bool { return projected() == 2*600+10 }, 5*time.Second, 10*time.Millisecond,
		"projected once one session had 1,024 changes, each task written once")
}

func TestATimeNotWrittenByTheDaemonIsReported(t *testing.T) {
	// Ensures a time the daemon did not write (edited in the sqlite3
	// shell, say) is reported with its column and value, not read as the
	// zero time.
	path := filepath.Join(t.TempDir(), "t.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "s"}))
	writeTask(t, d, "s", 1, store.Task{Taskid: 1, Status: store.Pending, Subject: "a"})
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`UPDATE sessions SET created_at = 'yesterday' WHERE id = 's'`)
	require.NoError(t, err)
	_, err = d.GetSession(ctx, "s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `created_at "yesterday" is not a time`)
	_, err = raw.Exec(`UPDATE tool_calls SET created_at = '3 pm' WHERE session_id = 's'`)
	require.NoError(t, err)
	_, err = d.CallBySeq(ctx, "s", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `call s/1: created_at "3 pm"`)
}

func TestAppendRefusesASeqLoggedBefore(t *testing.T) {
	// Ensures the writer keeps seq unique per session now that the log has
	// no key: against the calls of its own group, those committed since
	// the projector's mark, those indexed before it, a successor's first
	// (forced) row logged by its compaction, and what a previous run left
	// past the mark.
	path := filepath.Join(t.TempDir(), "d.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	require.NoError(t, d.CreateSession(ctx, &record.Session{ID: "old"}))
	a := store.Task{Taskid: 1, Status: store.Pending, Subject: "a"}
	writeTask(t, d, "old", 1, a)
	list := func(sess string, seq int64) record.Append {
		return record.Append{Call: record.Call{SessionID: sess, Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}
	}
	assert.ErrorIs(t, d.AppendCalls(ctx, []record.Append{list("old", 2), list("old", 2)}), db.ErrExists, "in one group")
	assert.ErrorIs(t, d.AppendCalls(ctx, []record.Append{list("old", 1)}), db.ErrExists, "committed since the mark")
	require.NoError(t, d.Project(ctx))
	assert.ErrorIs(t, d.AppendCalls(ctx, []record.Append{list("old", 1)}), db.ErrExists, "indexed")
	require.NoError(t, d.AppendCalls(ctx, []record.Append{list("old", 2)}))

	require.NoError(t, d.Project(ctx))
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", store.Snapshot{Tasks: []store.Task{a}, NextTaskid: 2})))
	assert.ErrorIs(t, d.AppendCalls(ctx, []record.Append{list("succ", 1)}), db.ErrExists, "a successor's forced row")
	require.NoError(t, d.AppendCalls(ctx, []record.Append{list("succ", 2)}))
	require.NoError(t, d.Close())

	// What a killed daemon leaves: a row past the mark, from the writer's
	// memory's point of view written by someone else.
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`UPDATE projection_state SET through_rowid = (SELECT max(rowid) - 1 FROM tool_calls)`)
	require.NoError(t, err)
	_, err = raw.Exec(`DELETE FROM log_index WHERE call > (SELECT through_rowid FROM projection_state)`)
	require.NoError(t, err)
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	defer d.Close()
	assert.ErrorIs(t, d.AppendCalls(ctx, []record.Append{list("succ", 2)}), db.ErrExists, "left past the mark")
	calls, err := d.Calls(ctx, "succ")
	require.NoError(t, err)
	assert.Len(t, calls, 2)
}

func TestMigrationIndexesTheLog(t *testing.T) {
	// Ensures migration 10 keeps every row and its rowid, indexes the rows
	// up to the projection's mark and leaves the rest for the catch-up,
	// which indexes them; and that migrating down gives the log its key
	// back with every row.
	path := filepath.Join(t.TempDir(), "old.db")
	raw, p := schemaAt(t, path, 9)
	const at = "2026-01-01T00:00:00.000000Z"
	_, err := raw.Exec(`
		INSERT INTO sessions (id, created_at, updated_at, projected_seq) VALUES ('a', ?1, ?1, 2), ('b', ?1, ?1, 1);
		INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid, status, subject, description) VALUES
			('a', 1, 'TaskCreate', '{"subject":"x"}', '{}', ?1, 1, 'pending', 'x', ''),
			('b', 1, 'TaskCreate', '{"subject":"y"}', '{}', ?1, 1, 'pending', 'y', ''),
			('a', 2, 'TaskUpdate', '{"taskid":1,"status":"completed"}', '{}', ?1, 1, 'completed', NULL, NULL),
			('b', 2, 'TaskUpdate', '{"taskid":1,"status":"inprogress"}', '{}', ?1, 1, 'inprogress', NULL, NULL);
		INSERT INTO task_projection (session_id, taskid, status, subject, description, created_at, updated_at) VALUES
			('a', 1, 'completed', 'x', '', ?1, ?1), ('b', 1, 'pending', 'y', '', ?1, ?1);
		UPDATE projection_state SET through_rowid = 3;`, at)
	require.NoError(t, err)
	column := func(q string) []string {
		rows, err := raw.Query(q)
		require.NoError(t, err)
		defer rows.Close()
		var got []string
		for rows.Next() {
			var v string
			require.NoError(t, rows.Scan(&v))
			got = append(got, v)
		}
		require.NoError(t, rows.Err())
		return got
	}
	rowids := func() []string {
		return column(`SELECT session_id || seq || ':' || rowid FROM tool_calls ORDER BY rowid`)
	}
	before := rowids()
	_, err = p.UpTo(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, before, rowids())
	indexed := func() []string { return column(`SELECT session_id || seq || ':' || call FROM log_index ORDER BY call`) }
	assert.Equal(t, []string{"a1:1", "b1:2", "a2:3"}, indexed(), "the rows up to the mark")
	var status string
	require.NoError(t, raw.QueryRow(`SELECT status FROM tasks WHERE session_id = 'b'`).Scan(&status))
	assert.Equal(t, "inprogress", status, "the view lays the tail over the projection")

	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	require.NoError(t, d.Project(ctx)) // the catch-up is done by then
	calls, err := d.Calls(ctx, "b")
	require.NoError(t, err)
	assert.Len(t, calls, 2)
	require.NoError(t, d.Close())
	assert.Equal(t, []string{"a1:1", "b1:2", "a2:3", "b2:4"}, indexed(), "and the catch-up the rest")

	_, err = p.DownTo(ctx, 9)
	require.NoError(t, err)
	assert.Equal(t, before, rowids())
	_, err = raw.Exec(`INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at) VALUES ('a', 2, 'TaskList', '{}', '{}', ?)`, at)
	assert.ErrorContains(t, err, "UNIQUE constraint failed: tool_calls.session_id, tool_calls.seq", "the key is back")
}

func TestAFailedCatchUpIsTriedAgainBeforeTheMarkMoves(t *testing.T) {
	// Ensures that when the start-up's catch-up fails (a sqlite3 shell
	// holding the write lock), the projector does not move the mark past
	// the rows a previous run left (which no memory holds): it catches up
	// first, so they are projected and the tasks view shows them.
	path := filepath.Join(t.TempDir(), "d.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	for _, id := range []string{"u", "v"} {
		require.NoError(t, d.CreateSession(ctx, &record.Session{ID: id}))
	}
	a := store.Task{Taskid: 1, Status: store.InProgress, Subject: "left by a killed daemon"}
	writeTask(t, d, "u", 1, a)
	require.NoError(t, d.Close())
	raw := testutil.RawDB(t, path)
	for _, q := range []string{`DELETE FROM task_projection`, `DELETE FROM log_index`, `UPDATE sessions SET projected_seq = 0`, `UPDATE projection_state SET through_rowid = 0`} {
		_, err = raw.Exec(q)
		require.NoError(t, err)
	}

	shell, err := raw.Conn(ctx)
	require.NoError(t, err)
	defer shell.Close()
	_, err = shell.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)
	logs := &testutil.SyncBuffer{}
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal, BusyTimeout: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	defer d.Close()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "catching up the tasks projection failed") },
		5*time.Second, 5*time.Millisecond)
	_, err = shell.ExecContext(ctx, `ROLLBACK`)
	require.NoError(t, err)

	writeTask(t, d, "v", 1, store.Task{Taskid: 1, Status: store.Pending, Subject: "this run's"})
	require.NoError(t, d.Project(ctx))
	var status string
	require.NoError(t, raw.QueryRow(`SELECT status FROM task_projection WHERE session_id = 'u' AND taskid = 1`).Scan(&status))
	assert.Equal(t, "inprogress", status, "projected")
	got, err := d.Tasks(ctx, "u")
	require.NoError(t, err)
	assert.Equal(t, []store.Task{a}, got)
}
