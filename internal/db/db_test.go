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

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/migrations"
)

var ctx = context.Background()

func TestOpen(t *testing.T) {
	// Ensures the file is created 0600 in a 0700 directory, in WAL mode, with
	// foreign keys on, and that reopening runs no migration twice.
	path := filepath.Join(t.TempDir(), "state", "x.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal}) // creates it: not testutil's copy
	require.NoError(t, err)
	defer d.Close()
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
	// Ensures a batch with one bad row writes nothing.
	d := testutil.MustOpenDB(t)
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))
	task := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"}
	row := func(seq int64, callID string) tasksessiond.Append {
		return tasksessiond.Append{Call: tasksessiond.Call{SessionID: "s", Seq: seq, CallID: callID, Name: "TaskCreate", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}, Task: &task, SetSubject: true, SetDescription: true}
	}
	require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{row(1, "c1")}))
	s, err := d.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.True(t, s.UpdatedAt.After(s.CreatedAt), "a call stamps the session's updated_at")
	err = d.AppendCalls(ctx, []tasksessiond.Append{row(2, "c2"), row(2, "c3")}) // seq reused
	assert.ErrorIs(t, err, tasksessiond.ErrExists)
	calls, err := d.Calls(ctx, "s")
	require.NoError(t, err)
	assert.Len(t, calls, 1, "neither row of the failed batch was written")

	err = d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "ghost", Seq: 1, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}})
	assert.Error(t, err, "a row for a session that does not exist violates the foreign key")
}

func TestSessions(t *testing.T) {
	d := testutil.MustOpenDB(t)
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: id, Title: "T " + id}))
	}
	assert.ErrorIs(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "a"}), tasksessiond.ErrExists)
	s, err := d.GetSession(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, "T b", s.Title)
	assert.Equal(t, tasksessiond.SessionActive, s.Status)
	assert.Equal(t, "2026-01-02T03:04:05", s.CreatedAt.Format("2006-01-02T15:04:05"), "times come from the injected clock")
	_, err = d.GetSession(ctx, "zz")
	assert.ErrorIs(t, err, tasksessiond.ErrNotFound)

	page, next, err := d.ListSessions(ctx, tasksessiond.ListFilter{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "b"}, ids(page))
	require.NotEmpty(t, next)
	page, next, err = d.ListSessions(ctx, tasksessiond.ListFilter{Limit: 2, Cursor: next})
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
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "old"}))
	task := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Completed, Subject: "carried"}
	writeTask(t, d, "old", 1, task)
	snap := tasksessiond.Snapshot{Tasks: []tasksessiond.Task{task}, NextTaskid: 2}
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", snap)))

	loaded, err := d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, &snap, loaded.Snapshot)
	got, err := d.GetSession(ctx, "succ")
	require.NoError(t, err)
	assert.Nil(t, got.Snapshot)
	assert.Equal(t, &tasksessiond.LogHead{Seq: 1, Checksum: loaded.Log.Checksum}, loaded.Log, "the head of its log: the forced row")
	loaded.Snapshot, loaded.Log = nil, nil
	assert.Equal(t, loaded, got, "the same record otherwise")
	page, _, err := d.ListSessions(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Equal(t, got, page[0])
	_, err = d.LoadSession(ctx, "zz")
	assert.ErrorIs(t, err, tasksessiond.ErrNotFound)

	err = d.CreateSession(ctx, &tasksessiond.Session{ID: "orphan", Snapshot: &snap})
	assert.ErrorContains(t, err, "made by compacting its parent", "a snapshot's tasks are its parent's")
}

// compaction is the plan of compacting old, holding snap, into newID.
func compaction(old, newID string, snap tasksessiond.Snapshot) tasksessiond.Compaction {
	return tasksessiond.Compaction{
		Old:   old,
		New:   &tasksessiond.Session{ID: newID, ParentID: old, Snapshot: &snap},
		Tasks: snap.Tasks,
		Forced: &tasksessiond.Append{Call: tasksessiond.Call{SessionID: newID, Seq: 1, CallID: "forced-" + newID, Name: "TaskList",
			Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`), Forced: true}},
	}
}

func ids(ss []tasksessiond.Session) []string {
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
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: fmt.Sprint("s", i)}))
	}
	row := func(sess string, seq int64) []tasksessiond.Append {
		return []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: sess, Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}
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
			assert.ErrorIs(t, errs[n], tasksessiond.ErrExists)
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
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: fmt.Sprint("s", i)}))
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
			errs[i] = d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: fmt.Sprint("s", i), Seq: 1, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}})
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
	testutil.FreshDB(t, path)
	var logs testutil.SyncBuffer
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, WALWarnBytes: 64 << 10,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))

	// A sqlite3 shell left inside a transaction.
	raw := testutil.RawDB(t, path)
	tx, err := raw.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	var n int
	require.NoError(t, tx.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n))

	big := json.RawMessage(`{"text":"` + strings.Repeat("x", 4000) + `"}`)
	for i := int64(1); i <= 60; i++ {
		require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "s", Seq: i, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: big}}}))
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
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, WALLimit: limit})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", 3000) + `"}`)
	seq := int64(0)
	var low int64 = math.MaxInt64 // the smallest size once it has passed half the limit
	write := func(n int) (peak int64) {
		for range n {
			seq++
			require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "s", Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: big}}}))
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
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))
	raw := testutil.RawDB(t, path)
	var stored string
	require.NoError(t, raw.QueryRow(`SELECT updated_at FROM sessions WHERE id = 's'`).Scan(&stored))
	for seq := int64(1); seq <= 3; seq++ {
		require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "s", Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}))
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
	list, _, err := d.ListSessions(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, last.Equal(list[0].UpdatedAt))

	require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "s", Seq: 4, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}))
	calls, err = d.Calls(ctx, "s")
	require.NoError(t, err)
	last = calls[len(calls)-1].CreatedAt
	list, _, err = d.ListSessions(ctx, tasksessiond.ListFilter{Status: tasksessiond.SessionActive})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, last.Equal(list[0].UpdatedAt), "after another call")
	s, err = d.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.True(t, last.Equal(s.UpdatedAt))
}

func TestOneWriterAtATime(t *testing.T) {
	// Ensures a database is opened for writing by one process at a time
	// (exactly-once by callId lives in that process's memory), that the
	// lock goes with Close, and that readers open it beside the writer.
	path := filepath.Join(t.TempDir(), "l.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))

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

func writeTask(t *testing.T, d *db.DB, sid string, seq int64, task tasksessiond.Task) {
	t.Helper()
	res := `{"content":[],"structuredContent":{"task":` + string(must(json.Marshal(task))) + `},"isError":false}`
	require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: sid, Seq: seq, Name: "TaskCreate",
		Arguments: json.RawMessage(`{}`), Result: json.RawMessage(res)}, Task: &task, SetSubject: true, SetDescription: true}}))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
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

func TestMigrationFromTheSynchronousTasksTable(t *testing.T) {
	// Ensures a database written by schema 4 (a synchronous tasks table,
	// up to date with the log) opens with its tasks intact through the
	// tasks view.
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
	assert.Equal(t, []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Completed, Subject: "a"}}, got)
}

func TestMigrationMovesTheSnapshots(t *testing.T) {
	// Ensures a database of schema 5, whose successors hold their
	// snapshots in the sessions row, opens with them where this one reads
	// them.
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
	assert.Equal(t, &tasksessiond.Snapshot{Tasks: []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"}}, NextTaskid: 2}, loaded.Snapshot)
	got, err := d.Tasks(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"}}, got)
	require.NoError(t, d.Close())
}

func TestMigrationKeepsTheJSONSnapshots(t *testing.T) {
	// Ensures a successor whose first tasks schema 8 kept as JSON loads
	// them as this schema keeps them, and is compacted again from them.
	path := filepath.Join(t.TempDir(), "old.db")
	raw, _ := schemaAt(t, path, 8)
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

	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	task := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "a", Description: "d"}
	loaded, err := d.LoadSession(ctx, "succ")
	require.NoError(t, err)
	assert.Equal(t, &tasksessiond.Snapshot{Tasks: []tasksessiond.Task{task}, NextTaskid: 2}, loaded.Snapshot)
	require.NoError(t, d.Compact(ctx, compaction("succ", "third", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{task}, NextTaskid: 2})))
	got, err := d.Tasks(ctx, "third")
	require.NoError(t, err)
	assert.Equal(t, []tasksessiond.Task{task}, got, "the views read the rebuilt table")
	require.NoError(t, d.Close())
}

func TestCreatedAtIsTheFirstChange(t *testing.T) {
	// Ensures the tasks view reads a task as created at its first change
	// and updated at its last, and a successor's snapshot keeps both.
	path := filepath.Join(t.TempDir(), "t.db")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, Now: func() time.Time {
		clock = clock.Add(time.Second)
		return clock
	}})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))
	a := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"}
	writeTask(t, d, "s", 1, a)
	a.Status = tasksessiond.Completed
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
	require.NoError(t, d.Compact(ctx, compaction("s", "succ", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{a}, NextTaskid: 2})))
	var sc, su string
	require.NoError(t, raw.QueryRow(`SELECT created_at, updated_at FROM tasks WHERE session_id = 'succ' AND taskid = 1`).Scan(&sc, &su))
	assert.Equal(t, created, sc, "the snapshot keeps the times")
	assert.Equal(t, updated, su)
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

func TestATimeNotWrittenByTheDaemonIsReported(t *testing.T) {
	// Ensures a time the daemon did not write (edited in the sqlite3
	// shell, say) in a log row is reported with its column and value; in a
	// session's record it is read as the zero time, so that it blocks
	// neither the session nor a listing (issue 52).
	path := filepath.Join(t.TempDir(), "t.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))
	writeTask(t, d, "s", 1, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"})
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`UPDATE sessions SET created_at = 'yesterday' WHERE id = 's'`)
	require.NoError(t, err)
	got, err := d.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.True(t, got.CreatedAt.IsZero())
	assert.False(t, got.UpdatedAt.IsZero(), "its last call's time")
	_, err = raw.Exec(`UPDATE tool_calls SET created_at = '3 pm' WHERE session_id = 's'`)
	require.NoError(t, err)
	_, err = d.CallBySeq(ctx, "s", 1)
	require.Error(t, err)
	assert.Regexp(t, `call 1 of s: .*"created_at": "3 pm" is not a time`, err.Error())
}

func TestAppendRefusesASeqLoggedBefore(t *testing.T) {
	// Ensures the log's key keeps seq unique per session: within one
	// group, against a committed row, and against a successor's first
	// (forced) row logged by its compaction; and that a refused request
	// does not fail the others of its group.
	d := testutil.MustOpenDB(t)
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "old"}))
	a := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"}
	writeTask(t, d, "old", 1, a)
	list := func(sess string, seq int64) tasksessiond.Append {
		return tasksessiond.Append{Call: tasksessiond.Call{SessionID: sess, Seq: seq, Name: "TaskList", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}
	}
	assert.ErrorIs(t, d.AppendCalls(ctx, []tasksessiond.Append{list("old", 2), list("old", 2)}), tasksessiond.ErrExists, "in one group")
	assert.ErrorIs(t, d.AppendCalls(ctx, []tasksessiond.Append{list("old", 1)}), tasksessiond.ErrExists, "committed")
	require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{list("old", 2)}))
	require.NoError(t, d.Compact(ctx, compaction("old", "succ", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{a}, NextTaskid: 2})))
	assert.ErrorIs(t, d.AppendCalls(ctx, []tasksessiond.Append{list("succ", 1)}), tasksessiond.ErrExists, "a successor's forced row")
	require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{list("succ", 2)}))
	calls, err := d.Calls(ctx, "succ")
	require.NoError(t, err)
	assert.Len(t, calls, 2)
}

func TestMigrationFrom10ComputesSnapshotsFromTheLog(t *testing.T) {
	// Ensures the upgrade from schema 10 keeps every log row, and gives
	// each successor the tasks its parent's log (and its parent's, up a
	// chain of successors, to a JSON snapshot or an empty start) replays
	// to, not what the projection says: here it is empty, as a user who
	// took it for a cache might leave it.
	path := filepath.Join(t.TempDir(), "old.db")
	raw, _ := schemaAt(t, path, 10)
	const at = "2026-01-01T00:00:00.000000Z"
	const later = "2026-01-02T00:00:00.000000Z"
	_, err := raw.Exec(`
		INSERT INTO sessions (id, status, created_at, updated_at) VALUES
			('a', 'compacted', ?1, ?1), ('b', 'compacted', ?1, ?1), ('c', 'active', ?1, ?1),
			('j', 'compacted', ?1, ?1), ('k', 'compacted', ?1, ?1), ('m', 'active', ?1, ?1);
		UPDATE sessions SET parent_id = 'a', successor_id = NULL WHERE id = 'b';
		UPDATE sessions SET parent_id = 'b' WHERE id = 'c';
		UPDATE sessions SET parent_id = 'j' WHERE id = 'k';
		UPDATE sessions SET parent_id = 'k' WHERE id = 'm';
		UPDATE sessions SET successor_id = 'b' WHERE id = 'a';
		UPDATE sessions SET successor_id = 'c' WHERE id = 'b';
		UPDATE sessions SET successor_id = 'k' WHERE id = 'j';
		UPDATE sessions SET successor_id = 'm' WHERE id = 'k';
		INSERT INTO snapshots (session_id, snapshot, projected) VALUES
			('b', NULL, 1), ('c', NULL, 1), ('m', NULL, 1),
			('k', '{"tasks":[{"taskid":1,"status":"pending","subject":"j1","description":"dj"}],"nextTaskid":2}', 1);
		INSERT INTO tool_calls (session_id, seq, name, arguments, is_error, result, created_at, taskid, status, subject, description) VALUES
			('a', 1, 'TaskCreate', '{"subject":"a1","description":"d1"}', 0, '{}', ?1, 1, 'pending', 'a1', 'd1'),
			('a', 2, 'TaskCreate', '{"subject":"a2"}', 0, '{}', ?1, 2, 'pending', 'a2', ''),
			('a', 3, 'TaskUpdate', '{"taskid":1,"status":"completed"}', 0, '{}', ?2, 1, 'completed', NULL, NULL),
			('a', 4, 'TaskUpdate', '{"taskid":9,"status":"completed"}', 1, '{}', ?2, NULL, NULL, NULL, NULL),
			('a', 5, 'TaskUpdate', '{"taskid":2,"subject":"a2b"}', 0, '{}', ?2, 2, 'pending', 'a2b', NULL),
			('b', 1, 'TaskList', '{}', 0, '{}', ?2, NULL, NULL, NULL, NULL),
			('b', 2, 'TaskCreate', '{"subject":"b3"}', 0, '{}', ?2, 3, 'pending', 'b3', ''),
			('b', 3, 'TaskUpdate', '{"taskid":1,"status":"deleted"}', 0, '{}', ?2, 1, 'deleted', NULL, NULL),
			('k', 1, 'TaskUpdate', '{"taskid":1,"status":"inprogress"}', 0, '{}', ?2, 1, 'inprogress', NULL, NULL);`, at, later)
	require.NoError(t, err)
	var rows int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM tool_calls`).Scan(&rows))
	require.NoError(t, raw.Close())

	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	check := testutil.RawDB(t, path)
	var after int
	require.NoError(t, check.QueryRow(`SELECT count(*) FROM tool_calls`).Scan(&after))
	assert.Equal(t, rows, after, "every row kept")

	a1 := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Completed, Subject: "a1", Description: "d1"}
	a2 := tasksessiond.Task{Taskid: 2, Status: tasksessiond.Pending, Subject: "a2b"}
	b3 := tasksessiond.Task{Taskid: 3, Status: tasksessiond.Pending, Subject: "b3"}
	deleted := a1
	deleted.Status = tasksessiond.Deleted
	j1 := tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "j1", Description: "dj"}
	started := j1
	started.Status = tasksessiond.InProgress
	for _, c := range []struct {
		id   string
		want tasksessiond.Snapshot
	}{
		{"b", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{a1, a2}, NextTaskid: 3}},
		{"c", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{deleted, a2, b3}, NextTaskid: 4}},
		{"k", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{j1}, NextTaskid: 2}},
		{"m", tasksessiond.Snapshot{Tasks: []tasksessiond.Task{started}, NextTaskid: 2}},
	} {
		loaded, err := d.LoadSession(ctx, c.id)
		require.NoError(t, err)
		assert.Equal(t, &c.want, loaded.Snapshot, "the snapshot of %s", c.id)
	}
	got, err := d.Tasks(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, []tasksessiond.Task{deleted, a2, b3}, got, "the tasks view of c")
	got, err = d.Tasks(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, []tasksessiond.Task{a1, a2}, got, "the tasks view of a")
	for _, gone := range []string{"task_projection", "log_index", "projection_state"} {
		var n int
		require.NoError(t, check.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = ?`, gone).Scan(&n))
		assert.Zero(t, n, "%s is dropped", gone)
	}
}

func TestAFileGoneFromUnderTheDaemonTakesNoWrites(t *testing.T) {
	// Ensures that once the file at the database's path is not the one
	// open (deleted, or another put in its place), every write is
	// refused with tasksessiond.ErrVanished — a commit would go where no one can read
	// it back — and Problem says so; before that, it says nothing.
	for _, how := range []string{"deleted", "replaced"} {
		t.Run(how, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v.db")
			testutil.FreshDB(t, path)
			d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
			require.NoError(t, err)
			defer d.Close()
			require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "s"}))
			writeTask(t, d, "s", 1, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "a"})
			assert.Empty(t, d.Problem())

			require.NoError(t, os.Rename(path, path+".moved"))
			if how == "replaced" {
				require.NoError(t, os.WriteFile(path, nil, 0o600))
			}
			task := tasksessiond.Task{Taskid: 2, Status: tasksessiond.Pending, Subject: "b"}
			err = d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "s", Seq: 2, Name: "TaskCreate",
				Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}, Task: &task, SetSubject: true, SetDescription: true}})
			require.ErrorIs(t, err, tasksessiond.ErrVanished)
			assert.ErrorContains(t, err, path+" was deleted, moved or replaced")
			assert.ErrorIs(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "t"}), tasksessiond.ErrVanished)
			assert.ErrorIs(t, d.Compact(ctx, compaction("s", "s2", tasksessiond.Snapshot{NextTaskid: 2})), tasksessiond.ErrVanished)
			assert.Contains(t, d.Problem(), "was deleted, moved or replaced")
		})
	}
}
