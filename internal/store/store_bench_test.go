package store_test

import (
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

func BenchmarkCreate(b *testing.B) {
	s := store.New()
	for b.Loop() {
		s.Create("Write the parser tests", "Cover the error paths.")
	}
}

func BenchmarkUpdate(b *testing.B) {
	s := store.New()
	for range 1000 {
		s.Create("t", "")
	}
	st := tasksessiond.Completed
	i := 0
	for b.Loop() {
		s.Update(tasksessiond.Change{Taskid: i%1000 + 1, Status: st})
		i++
	}
}

func BenchmarkSnapshotRestore1000(b *testing.B) {
	s := store.New()
	for range 1000 {
		s.Create("Write the parser tests", "Cover the error paths.")
	}
	for b.Loop() {
		if _, err := store.Restore(s.Snapshot()); err != nil {
			b.Fatal(err)
		}
	}
}
