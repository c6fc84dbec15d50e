package replay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// failing is a real database whose log read fails after some rows, as a
// disk error or a cancelled load would.
type failing struct {
	*db.DB
	after int
	err   error
}

func (f failing) EachCall(ctx context.Context, id string, fn func(*tasksessiond.Call) error) error {
	n := 0
	return f.DB.EachCall(ctx, id, func(c *tasksessiond.Call) error {
		if n++; n > f.after {
			return f.err
		}
		return fn(c)
	})
}

func TestSessionReadsWhileItApplies(t *testing.T) {
	// Ensures a session read on one goroutine and applied on another
	// gives every row, in order, to the store and to Each (with bytes that
	// outlive the read), across many batches; and that a read failing or
	// cancelled part way is returned, not a list cut short taken for whole.
	ctx := context.Background()
	d := testutil.MustOpenDB(t)
	calls := make([]wire.TranscriptCall, 1000)
	for i := range calls {
		calls[i] = wire.TranscriptCall{Name: tools.TaskCreate, CallID: fmt.Sprint("c", i), Arguments: []byte(fmt.Sprintf(`{"subject":"t%d"}`, i))}
	}
	_, err := session.NewManager(d, nil).Replay(ctx, wire.ReplaySession{SessionID: "s", Calls: calls})
	require.NoError(t, err)

	var seen []*tasksessiond.Call
	l, err := replay.Session(ctx, d, "s", replay.Options{Each: func(c *tasksessiond.Call) { seen = append(seen, c) }})
	require.NoError(t, err)
	assert.Equal(t, 1000, l.Store.Len())
	assert.Equal(t, 1000, l.Report.Applied)
	require.Len(t, seen, 1000)
	for i, c := range seen {
		assert.EqualValues(t, i+1, c.Seq)
		assert.Equal(t, fmt.Sprintf(`{"subject":"t%d"}`, i), string(c.Arguments), "row %d", i)
	}

	broken := errors.New("disk gone")
	_, err = replay.Session(ctx, failing{DB: d, after: 700, err: broken}, "s", replay.Options{})
	assert.ErrorIs(t, err, broken)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = replay.Session(cancelled, d, "s", replay.Options{})
	assert.Error(t, err)
}
