package fsck_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

// damages are what the fuzzer's bytes choose from: a column of a row of
// each table, given a value; a row deleted; an index dropped. Statements
// the schema refuses (a NOT NULL, a CHECK, a type) change nothing, as in
// the shell.
var (
	callColumns  = []string{"taskid", "status", "subject", "description", "arguments", "result", "seq", "is_error", "call_id", "name", "created_at", "forced"}
	snapColumns  = []string{"status", "subject", "description", "taskid"}
	lineColumns  = []string{"parent_id", "successor_id", "status", "created_at"}
	damageValues = []string{"NULL", "0", "1", "2", "3", "99", "'x'", "'completed'", "'deleted'", "'S'", "'N'", "'active'", "'compacted'",
		`'{"subject":"z"}'`, `'{}'`, `'{"taskid":1,"status":"deleted"}'`, `'{"taskid":2,"subject":"y"}'`, "'2099-01-01T00:00:00.000000Z'"}
)

func damages(data []byte) []string {
	var out []string
	for len(data) >= 3 {
		op, row, val := data[0], int(data[1]), damageValues[int(data[2])%len(damageValues)]
		data = data[3:]
		switch op % 8 {
		case 0, 1:
			out = append(out, fmt.Sprintf(`UPDATE tool_calls SET %s = %s WHERE rowid = %d`, callColumns[int(op/8)%len(callColumns)], val, row%16+1))
		case 2:
			out = append(out, fmt.Sprintf(`DELETE FROM tool_calls WHERE rowid = %d`, row%16+1))
		case 3:
			out = append(out, fmt.Sprintf(`UPDATE snapshot_tasks SET %s = %s WHERE taskid = %d`, snapColumns[int(op/8)%len(snapColumns)], val, row%8+1))
		case 4:
			out = append(out, fmt.Sprintf(`DELETE FROM snapshot_tasks WHERE taskid = %d`, row%8+1))
		case 5:
			if row%2 == 0 {
				out = append(out, `UPDATE snapshots SET next_taskid = `+val)
			} else {
				out = append(out, `DELETE FROM snapshots`)
			}
		case 6:
			out = append(out, fmt.Sprintf(`UPDATE sessions SET %s = %s WHERE id = '%s'`, lineColumns[int(op/8)%len(lineColumns)], val, []string{"S", "N"}[row%2]))
		case 7:
			out = append(out, `DROP INDEX `+db.Indexes[row%len(db.Indexes)].Name)
		}
	}
	return out
}

func FuzzDamage(f *testing.F) {
	// Ensures that whatever columns and rows of a real database are
	// changed or deleted, fsck reports without failing, repair does not
	// fail either, and repair never lowers the number of rows that agree
	// with their replay.
	template := lineageDB(f)
	if _, err := os.Stat(template + "-wal"); err == nil {
		f.Fatal("the template's WAL was not checkpointed into it")
	}
	for _, seed := range [][]byte{
		{0, 0, 0},           // a change column set to NULL
		{2, 2, 0},           // a create deleted
		{4, 1, 0},           // a snapshot row deleted
		{5, 0, 5, 5, 1, 0},  // next_taskid changed, the snapshot deleted
		{6, 1, 0, 14, 0, 0}, // the lineage columns cleared
		{32, 1, 13, 7, 0, 0},
		{40, 3, 14, 0, 4, 6},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "t.db")
		copyFile(t, template, path)
		raw := testutil.RawDB(t, path)
		for _, q := range damages(data) {
			raw.Exec(q) // refused by the schema: nothing changed, as in the shell
		}
		if err := raw.Close(); err != nil {
			t.Fatal(err)
		}
		d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
		if err != nil {
			t.Fatalf("open after %q: %v", damages(data), err)
		}
		defer d.Close()
		before, done, err := fsck.Repair(ctx, d)
		if err != nil {
			t.Fatalf("repair after %q: %v", damages(data), err)
		}
		after, err := fsck.Check(ctx, d)
		if err != nil {
			t.Fatalf("check after repair after %q: %v", damages(data), err)
		}
		if after.Agree() < before.Agree() {
			t.Fatalf("after %q repair (%+v) lowered the rows that agree with their replay from %d to %d:\nbefore %+v\nafter %+v",
				damages(data), done, before.Agree(), after.Agree(), before, after)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
