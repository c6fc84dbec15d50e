package session_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func loaded(t *testing.T, m *session.Manager) int {
	t.Helper()
	st, err := m.Stats(ctx)
	require.NoError(t, err)
	return st.Loaded
}

func TestEvictionOverCap(t *testing.T) {
	// Ensures sessions beyond the cap leave memory, least recently used
	// first, and come back by replay with the same tasks.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	m.SetMaxLoaded(3)
	var ids []string
	for i := range 5 {
		id := newSession(t, m)
		call(t, m, id, tools.TaskCreate, fmt.Sprintf(`{"subject":"task of %d"}`, i))
		ids = append(ids, id)
		assert.LessOrEqual(t, loaded(t, m), 3)
	}
	for i, id := range ids {
		got := call(t, m, id, tools.TaskGet, `{"taskid":1}`)
		assert.Equal(t, fmt.Sprintf("task of %d", i), got.StructuredContent.Task.Subject)
		next := call(t, m, id, tools.TaskCreate, `{"subject":"again"}`)
		assert.Equal(t, 2, next.StructuredContent.Task.Taskid, "replayed, not restarted")
	}
	assert.LessOrEqual(t, loaded(t, m), 3)
}

func TestEvictIdle(t *testing.T) {
	// Ensures the sessions unused for longer than the idle time leave
	// memory, and come back by replay on their next use.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	m.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	a, b := newSession(t, m), newSession(t, m)
	call(t, m, a, tools.TaskCreate, `{"subject":"a"}`)
	advance(time.Minute) // a is now idle for longer than b
	call(t, m, b, tools.TaskCreate, `{"subject":"b"}`)
	advance(time.Second)
	assert.Equal(t, 1, m.EvictIdle(30*time.Second))
	assert.Equal(t, 1, loaded(t, m))
	got := call(t, m, a, tools.TaskList, `{}`)
	assert.Len(t, got.StructuredContent.Tasks, 1)
	assert.Equal(t, 0, m.EvictIdle(time.Hour))
}

func TestStartLoadsNothing(t *testing.T) {
	// Ensures a manager over a database full of history replays nothing
	// until a session is used: start-up costs the same however long the
	// history. Reading records and lists does not load a session either.
	d := testutil.MustOpenDB(t)
	seed := session.NewManager(d, nil)
	var ids []string
	for i := range 20 {
		id := newSession(t, seed)
		for j := range 10 {
			call(t, seed, id, tools.TaskCreate, fmt.Sprintf(`{"subject":"task %d of %d"}`, j, i))
		}
		ids = append(ids, id)
	}

	m := session.NewManager(d, nil)
	st, err := m.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Loaded)
	assert.Equal(t, 20, st.Total)
	info, err := m.Get(ctx, ids[3])
	require.NoError(t, err)
	assert.Equal(t, 10, info.Counts.Total, "counted by replaying its log, not kept")
	list, _, err := m.List(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	assert.Len(t, list, 20)
	assert.Equal(t, 0, loaded(t, m))

	got := call(t, m, ids[3], tools.TaskGet, `{"taskid":10}`)
	assert.Equal(t, "task 9 of 3", got.StructuredContent.Task.Subject)
	assert.Equal(t, 1, loaded(t, m), "only the session used is replayed")
}
