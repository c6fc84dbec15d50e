package board_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/board"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestBoardReconnects(t *testing.T) {
	// Ensures the board outlives its daemon: while none answers the page
	// says so, and once one serves the socket again the board reconnects by
	// itself, reloads the open board and shows the changes made meanwhile.
	t.Parallel()
	d := testutil.MustOpenDB(t)
	socket := testutil.SocketPath(t)
	start := func() (stop func()) {
		dm, err := daemon.Start(d, daemon.Config{Socket: socket, Version: "test"})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- dm.Serve() }()
		return func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.NoError(t, dm.Close(ctx))
			require.NoError(t, <-done)
		}
	}
	stop := start()
	c := testutil.DialSocket(t, socket)
	s, err := c.CreateSession(bg, wire.CreateSession{Title: "Survivor"})
	require.NoError(t, err)
	createTask(t, c, s.ID, "Before the restart", "")

	b, err := board.New(board.Config{Dial: func(ctx context.Context) (*client.Client, error) { return client.Dial(ctx, socket) }})
	require.NoError(t, err)
	ln, err := board.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx, ln) }()
	defer func() {
		cancel()
		require.NoError(t, <-served)
	}()

	page := tab(t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(b.URL(ln)+"#"+s.ID)))
	waitFor(t, page, `document.body.dataset.ready === '1'`, 10*time.Second)

	stop()
	waitFor(t, page, `document.getElementById('conn').dataset.state === 'down'`, 5*time.Second)
	stop = start()
	defer func() { stop() }()
	c = testutil.DialSocket(t, socket)
	createTask(t, c, s.ID, "After the restart", "")
	waitFor(t, page, `document.getElementById('conn').dataset.state === 'live'`, 10*time.Second)
	waitFor(t, page, `!!document.querySelector('#col-pending li[data-taskid="2"]')`, 10*time.Second)
}
