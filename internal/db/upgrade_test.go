package db_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestRefusesANewerSchema(t *testing.T) {
	// Ensures a database a newer binary upgraded is refused, by the daemon
	// and by fsck, saying which schema it is and which this binary knows,
	// and is left as it is.
	path := filepath.Join(t.TempDir(), "new.db")
	d := testutil.MustOpenDBAt(t, path)
	require.NoError(t, d.Close())
	next := db.KnownSchema() + 1
	_, err := testutil.RawDB(t, path).Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, next)
	require.NoError(t, err)
	want := fmt.Sprintf("is schema %d, this binary knows up to %d: upgrade tasksessiond", next, next-1)
	_, err = db.Open(ctx, path, db.Options{})
	assert.ErrorContains(t, err, want)
	_, err = db.OpenReadOnly(ctx, path)
	assert.ErrorContains(t, err, want)
	var v int64
	require.NoError(t, testutil.RawDB(t, path).QueryRow(`SELECT max(version_id) FROM goose_db_version`).Scan(&v))
	assert.Equal(t, next, v)
}

// schema10 makes a schema-10 database holding n calls with results of
// about 1 KB.
func schema10(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ten.db")
	raw, _ := schemaAt(t, path, 10)
	_, err := raw.Exec(`
		INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z');
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid, status, subject, description)
		SELECT 'old', i, 'TaskCreate', '{"subject":"t"}',
			'{"structuredContent":{"task":{"taskid":' || i || ',"status":"pending","subject":"t","description":"' || hex(randomblob(500)) || '"}}}',
			'2026-01-01T00:00:01.000000Z', i, 'pending', 't', '' FROM n;`, n)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	return path
}

func TestUpgradeSaysWhatItNeedsAndHowFar(t *testing.T) {
	// Ensures an upgrade that copies the log is refused before it starts
	// when --max-db-size would not hold the copy (the file left at its
	// schema), and otherwise logs that it starts, the room it needs, and
	// each migration as it is applied.
	const n = 200 // the cap is checked against the file's size, whatever it is
	path := schema10(t, n)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	_, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal, MaxBytes: fi.Size() * 3 / 2})
	require.Error(t, err)
	assert.ErrorContains(t, err, fmt.Sprintf("from schema 10 to %d may grow it from", db.KnownSchema()))
	assert.ErrorContains(t, err, "past --max-db-size")
	var v int64
	require.NoError(t, testutil.RawDB(t, path).QueryRow(`SELECT max(version_id) FROM goose_db_version`).Scan(&v))
	assert.Equal(t, int64(10), v, "left as it was")

	var logs testutil.SyncBuffer
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer d.Close()
	out := logs.String()
	assert.Contains(t, out, "upgrading the database")
	assert.Contains(t, out, "needsUpToBytes=")
	assert.Contains(t, out, fmt.Sprintf("msg=upgraded database=%s from=10 to=%d schema=11", path, db.KnownSchema()))
	assert.Contains(t, out, fmt.Sprint("schema=", db.KnownSchema()))
	assert.Contains(t, out, "upgrade done")
	tasks, err := d.Tasks(ctx, "old")
	require.NoError(t, err)
	assert.Len(t, tasks, n)
	// Its rows were chained by the upgrade: the load checks them.
	l, err := replay.Session(ctx, d, "old", replay.Options{})
	require.NoError(t, err)
	assert.Equal(t, n, l.Store.Len())
	assert.Equal(t, &tasksessiond.LogHead{Seq: n, Checksum: l.Session.Log.Checksum}, l.Session.Log)
}

func TestUpgradeChainsTheLogAsTheWriterDoes(t *testing.T) {
	// Ensures migration 14 gives every row of a database logged before it
	// (a successor's, chained to its snapshot, included) the checksum the
	// writer gives it, and each session its head (15 a session that never
	// logged a call, its seq-0 head): a load then checks.
	path := filepath.Join(t.TempDir(), "c.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	for _, id := range []string{"old", "empty"} {
		_, err := m.Create(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
	}
	do := func(id, name, args string) {
		_, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: name, Arguments: []byte(args), CallID: id + args})
		require.NoError(t, err)
	}
	do("old", "TaskCreate", `{"subject":"a","description":"d"}`)
	do("old", "TaskCreate", `{"subject":"b"}`)
	do("old", "TaskUpdate", `{"taskid":1,"status":"completed"}`)
	_, err := m.Compact(ctx, wire.Compact{SessionID: "old", NewSessionID: "new"})
	require.NoError(t, err)
	do("new", "TaskCreate", `{"subject":"c"}`)
	require.NoError(t, d.Close())
	dump := func() string {
		var out string
		rows, err := testutil.RawDB(t, path).Query(`SELECT session_id, seq, checksum FROM tool_calls ORDER BY 1, 2`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id string
			var seq, sum int64
			require.NoError(t, rows.Scan(&id, &seq, &sum))
			out += fmt.Sprintf("%s/%d %d\n", id, seq, sum)
		}
		return out
	}
	written := dump()
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`DELETE FROM goose_db_version WHERE version_id IN (14, 15); DROP TABLE log_heads; ALTER TABLE tool_calls DROP COLUMN checksum;`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	d = testutil.MustOpenDBAt(t, path)
	assert.Equal(t, written, dump(), "the upgrade chains as the writer did")
	for _, id := range []string{"old", "new", "empty"} {
		_, err := replay.Session(ctx, d, id, replay.Options{})
		assert.NoError(t, err, id)
	}
}

func TestGroupCommitWritesEveryHead(t *testing.T) {
	// Ensures the heads of many sessions committed in one group (written a
	// few statements at a time) are each their log's last row: every
	// session then loads, its chain checked.
	d := testutil.MustOpenDB(t)
	const sessions, calls = 80, 20
	for i := range sessions {
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: fmt.Sprint("s", i)}))
	}
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev int64
			for seq := int64(1); seq <= calls; seq++ {
				a := []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: fmt.Sprint("s", i), Seq: seq, Name: "TaskList",
					Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}, Prev: prev}}
				if !assert.NoError(t, d.AppendCalls(ctx, a)) {
					return
				}
				prev = a[0].Call.Checksum
			}
		}()
	}
	wg.Wait()
	for i := range sessions {
		l, err := replay.Session(ctx, d, fmt.Sprint("s", i), replay.Options{})
		require.NoError(t, err)
		assert.Equal(t, int64(calls), l.Session.Log.Seq)
	}
}

func TestUpgradeGivesAHeadOnlyToASessionThatNeverLoggedACall(t *testing.T) {
	// Ensures migration 15 gives a root session without rows or head its
	// seq-0 head, so that it loads as the empty list it is, keeps every
	// head there was, and gives none to a session whose rows have no
	// head: only the head says where a log ended, so that session, which
	// schema 14 refused, is still refused, saying its head is missing.
	path := filepath.Join(t.TempDir(), "h.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	for _, id := range []string{"logged", "empty", "headless"} {
		_, err := m.Create(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
	}
	for _, id := range []string{"logged", "headless"} {
		_, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: "TaskCreate", Arguments: []byte(`{"subject":"a"}`)})
		require.NoError(t, err)
	}
	require.NoError(t, d.Close())
	heads := func() map[string]string {
		out := map[string]string{}
		rows, err := testutil.RawDB(t, path).Query(`SELECT session_id, seq, checksum FROM log_heads`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id string
			var seq, sum int64
			require.NoError(t, rows.Scan(&id, &seq, &sum))
			out[id] = fmt.Sprint(seq, " ", sum)
		}
		return out
	}
	before := heads()
	// Back to schema 14, as a daemon of that schema left it: no head for
	// a session without rows; and one session's head deleted.
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`DELETE FROM log_heads WHERE session_id IN ('empty', 'headless');
		CREATE TABLE h14 (session_id TEXT PRIMARY KEY, seq INTEGER NOT NULL CHECK (seq >= 1), checksum INTEGER NOT NULL) STRICT, WITHOUT ROWID;
		INSERT INTO h14 SELECT * FROM log_heads; DROP TABLE log_heads; ALTER TABLE h14 RENAME TO log_heads;
		DELETE FROM goose_db_version WHERE version_id = 15;`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	d = testutil.MustOpenDBAt(t, path)
	assert.Equal(t, map[string]string{"logged": before["logged"], "empty": "0 0"}, heads())
	for _, id := range []string{"logged", "empty"} {
		_, err := replay.Session(ctx, d, id, replay.Options{})
		assert.NoError(t, err, id)
	}
	_, err = replay.Session(ctx, d, "headless", replay.Options{})
	assert.ErrorIs(t, err, tasksessiond.ErrDamaged)
	assert.ErrorContains(t, err, "session headless: its head (the log_heads row every session has from its creation) is missing: its rows 1 to 1 check")
}
