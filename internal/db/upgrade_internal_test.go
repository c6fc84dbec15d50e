package db

import "testing"

func TestCopiesCountsTheTablesOfData(t *testing.T) {
	// Ensures an upgrade asks for room to copy a table only when a
	// migration ahead copies or rewrites one of data: from schema 14 on,
	// only log_heads (a row a session) is remade.
	for from, want := range map[int64]bool{10: true, 13: true, 14: false, KnownSchema(): false} {
		if got := copies(from); got != want {
			t.Errorf("copies(%d) = %v, want %v", from, got, want)
		}
	}
}
