package db_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
)

// BenchmarkCreateSession measures creating a session, one commit each
// (its row and its log's head), under full sync as the daemon runs.
func BenchmarkCreateSession(b *testing.B) {
	d, err := db.Open(ctx, filepath.Join(b.TempDir(), "b.db"), db.Options{Sync: db.SyncFull})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.ResetTimer()
	for i := range b.N {
		if err := d.CreateSession(ctx, &tasksessiond.Session{ID: fmt.Sprint("s", i)}); err != nil {
			b.Fatal(err)
		}
	}
}
