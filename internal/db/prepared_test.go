package db

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPreparedReads(t *testing.T) {
	// Ensures read queries are prepared once per text and give the same
	// answers and errors as unprepared ones, and that texts past the bound
	// still run.
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), Options{})
	require.NoError(t, err)
	defer d.Close()
	p := d.reads
	var n int
	require.NoError(t, p.GetContext(t.Context(), &n, `SELECT count(*) FROM sessions`))
	first := p.stmts[`SELECT count(*) FROM sessions`]
	require.NotNil(t, first)
	require.NoError(t, p.GetContext(t.Context(), &n, `SELECT count(*) FROM sessions`))
	assert.Same(t, first, p.stmts[`SELECT count(*) FROM sessions`], "prepared once")

	err = p.GetContext(t.Context(), &n, `SELECT id FROM sessions WHERE id = ?`, "none")
	assert.True(t, errors.Is(err, sql.ErrNoRows), "%v", err)
	err = p.GetContext(t.Context(), &n, `SELECT nonsense FROM nowhere`)
	assert.ErrorContains(t, err, "no such table", "a query that does not prepare says why when run")

	for i := range maxPrepared + 5 {
		var got int
		require.NoError(t, p.GetContext(t.Context(), &got, fmt.Sprintf(`SELECT %d`, i)))
		assert.Equal(t, i, got)
	}
	assert.Len(t, p.stmts, maxPrepared, "bounded")
}

func TestPreparedReadsConcurrently(t *testing.T) {
	// Ensures callers racing to prepare the same text all get answers and
	// one statement is kept (run with -race).
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"), Options{})
	require.NoError(t, err)
	defer d.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var got int
			assert.NoError(t, d.reads.GetContext(t.Context(), &got, `SELECT ? + 1`, i))
			assert.Equal(t, i+1, got)
		})
	}
	wg.Wait()
	assert.Len(t, d.reads.stmts, 1)
}
