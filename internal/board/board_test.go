package board_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/board"
	"github.com/tasksessiond/tasksessiond/wire"
)

var bg = context.Background()

func createTask(tb testing.TB, c *client.Client, session, subject, description string) {
	tb.Helper()
	r, err := c.CallTool(bg, client.ToolCall{SessionID: session, Name: "TaskCreate", Arguments: map[string]any{"subject": subject, "description": description}})
	require.NoError(tb, err)
	require.False(tb, r.IsError, r.Text())
}

func updateTask(tb testing.TB, c *client.Client, session string, taskid int, status string) {
	tb.Helper()
	r, err := c.CallTool(bg, client.ToolCall{SessionID: session, Name: "TaskUpdate", Arguments: map[string]any{"taskid": taskid, "status": status}})
	require.NoError(tb, err)
	require.False(tb, r.IsError, r.Text())
}

func TestBoardListsSessions(t *testing.T) {
	// Ensures the page loads with the printed URL and lists every session,
	// newest first, with its title, host, status and counts, and that the
	// filters hide what does not match.
	t.Parallel()
	f := startBoard(t)
	older, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Refactor the parser", Metadata: json.RawMessage(`{"host":"codex","directory":"/src/parser"}`)})
	require.NoError(t, err)
	createTask(t, f.c, older.ID, "Read the grammar", "")
	updateTask(t, f.c, older.ID, 1, "completed")
	createTask(t, f.c, older.ID, "Write the tests", "")
	newer, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Ship the release", Metadata: json.RawMessage(`{"host":"claude-code"}`)})
	require.NoError(t, err)

	ctx := tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.url)))
	waitFor(t, ctx, `document.body.dataset.ready === '1'`, 10*time.Second)
	// A session made after the board last looked shows within a second.
	waitFor(t, ctx, `document.querySelectorAll('#session-list li').length === 2`, 5*time.Second)
	// textContent, not innerText: it does not depend on the row having been laid out.
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('#session-list li')].map(li => li.textContent)`)
	require.Len(t, rows, 2)
	assert.Contains(t, rows[0], "Ship the release", "newest first")
	assert.Contains(t, rows[0], "claude-code")
	assert.Contains(t, rows[1], "Refactor the parser")
	assert.Contains(t, rows[1], "codex · /src/parser")
	assert.Contains(t, rows[1], "2 tasks: 1 pending, 0 in progress, 1 completed")
	assert.Contains(t, rows[1], "active")
	assert.Equal(t, "live", eval[string](t, ctx, `document.getElementById('conn').textContent`))
	assert.NotContains(t, eval[string](t, ctx, `location.href`), "token", "the token leaves the address bar (the tab's sessionStorage keeps it)")

	// A session created now shows up without a reload (the board looks
	// for new ones every second).
	eval[bool](t, ctx, `window.__marker = true`)
	third, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Third"})
	require.NoError(t, err)
	waitFor(t, ctx, fmt.Sprintf(`!!document.querySelector('#session-list li[data-head=%q]')`, third.ID), 5*time.Second)
	assert.Contains(t, eval[string](t, ctx, `document.querySelector('#session-list li').textContent`), "Third")
	assert.True(t, eval[bool](t, ctx, `window.__marker === true`), "no reload")

	// Text filter, then the status filter.
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("q"), "parser")))
	waitFor(t, ctx, `[...document.querySelectorAll('#session-list li')].filter(li => !li.hidden).length === 1`, 5*time.Second)
	assert.Contains(t, eval[string](t, ctx, `document.getElementById('session-count').textContent`), "1 of 3")
	setFilter(t, ctx, "", "compacted")
	waitFor(t, ctx, `[...document.querySelectorAll('#session-list li')].every(li => li.hidden)`, 5*time.Second)

	// Opening a row shows its board.
	setFilter(t, ctx, "", "all")
	eval[bool](t, ctx, fmt.Sprintf(`(document.querySelector('#session-list li[data-head=%q] button').click(), true)`, older.ID))
	waitFor(t, ctx, `document.getElementById('board-h').textContent === 'Refactor the parser'`, 5*time.Second)
	assert.Equal(t, []string{"Write the tests"}, eval[[]string](t, ctx, `[...document.querySelectorAll('#col-pending .subject')].map(e => e.textContent)`))
	assert.Equal(t, []string{"Read the grammar"}, eval[[]string](t, ctx, `[...document.querySelectorAll('#col-completed .subject')].map(e => e.textContent)`))
	_ = newer
}

// setFilter sets the filters as a person would, and lets the page react.
func setFilter(tb testing.TB, ctx context.Context, q, status string) {
	tb.Helper()
	eval[bool](tb, ctx, fmt.Sprintf(`(() => {
		const q = document.getElementById('q'), s = document.getElementById('status');
		q.value = %q; q.dispatchEvent(new Event('input'));
		s.value = %q; s.dispatchEvent(new Event('change'));
		return true;
	})()`, q, status))
}

func TestBoardShowsChangesLive(t *testing.T) {
	// Ensures a TaskCreate and a TaskUpdate made over the socket appear on
	// the open board within a second, without a reload; deleted tasks stay
	// behind the toggle.
	t.Parallel()
	f := startBoard(t)
	s, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Live"})
	require.NoError(t, err)
	createTask(t, f.c, s.ID, "Already there", "since before the page")

	ctx := tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"#"+s.ID)))
	waitFor(t, ctx, `document.body.dataset.ready === '1'`, 10*time.Second)
	assert.Equal(t, "Live", eval[string](t, ctx, `document.getElementById('board-h').textContent`))
	assert.Equal(t, "Already there", eval[string](t, ctx, `document.querySelector('#col-pending li[data-taskid="1"] .subject').textContent`))
	eval[bool](t, ctx, `window.__marker = true`)

	start := time.Now()
	createTask(t, f.c, s.ID, "Made over the socket", "appears by itself")
	waitFor(t, ctx, `!!document.querySelector('#col-pending li[data-taskid="2"]')`, 5*time.Second)
	assert.Less(t, time.Since(start), time.Second, "within a second of the change")
	assert.Equal(t, "#2 Made over the socket", eval[string](t, ctx, `document.querySelector('#col-pending li[data-taskid="2"] .task-head').textContent`))
	assert.Equal(t, "appears by itself", eval[string](t, ctx, `document.querySelector('#col-pending li[data-taskid="2"] .desc').textContent`))

	start = time.Now()
	updateTask(t, f.c, s.ID, 1, "inprogress")
	waitFor(t, ctx, `!!document.querySelector('#col-inprogress li[data-taskid="1"]')`, 5*time.Second)
	assert.Less(t, time.Since(start), time.Second)
	updateTask(t, f.c, s.ID, 2, "deleted")
	waitFor(t, ctx, `!!document.querySelector('#col-deleted li[data-taskid="2"]')`, 5*time.Second)
	assert.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll('#col-pending li').length`))
	assert.True(t, eval[bool](t, ctx, `document.getElementById('col-deleted-wrap').hidden`), "deleted tasks are behind the toggle")
	eval[bool](t, ctx, `(document.getElementById('toggle-deleted').click(), true)`)
	assert.False(t, eval[bool](t, ctx, `document.getElementById('col-deleted-wrap').hidden`))
	assert.Equal(t, "true", eval[string](t, ctx, `document.getElementById('toggle-deleted').getAttribute('aria-pressed')`))
	assert.Contains(t, eval[string](t, ctx, `document.getElementById('board-progress-text').textContent`), "2 tasks: 0 pending, 1 in progress, 0 completed, 1 deleted")
	// The list's row follows too (its counts are re-read after a change).
	waitFor(t, ctx, fmt.Sprintf(`document.querySelector('#session-list li[data-head=%q]').textContent.includes('1 in progress')`, s.ID), 5*time.Second)
	assert.True(t, eval[bool](t, ctx, `window.__marker === true`), "no reload")
	waitFor(t, ctx, `document.getElementById('announce').textContent.includes('#2')`, 5*time.Second)
}

func TestBoardFollowsCompaction(t *testing.T) {
	// Ensures a compaction moves the open board to the successor (its
	// tasks, its id in the address), folds the lineage into one row, and
	// that the successor's changes then show.
	t.Parallel()
	f := startBoard(t)
	s, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Long run"})
	require.NoError(t, err)
	createTask(t, f.c, s.ID, "Before compaction", "")

	ctx := tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"#"+s.ID)))
	waitFor(t, ctx, `document.body.dataset.ready === '1'`, 10*time.Second)

	out, err := f.c.Compact(bg, wire.Compact{SessionID: s.ID})
	require.NoError(t, err)
	next := out.Session.ID
	waitFor(t, ctx, fmt.Sprintf(`location.hash === '#' + %q`, next), 5*time.Second)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById('board-meta').textContent.startsWith(%q)`, next), 5*time.Second)
	assert.Equal(t, "Before compaction", eval[string](t, ctx, `document.querySelector('#col-pending li[data-taskid="1"] .subject').textContent`))
	waitFor(t, ctx, `document.querySelectorAll('#session-list li').length === 1 && document.querySelector('#session-list li').textContent.includes('1 compaction')`, 5*time.Second)
	assert.Equal(t, next, eval[string](t, ctx, `document.querySelector('#session-list li').dataset.head`))

	createTask(t, f.c, next, "After compaction", "")
	waitFor(t, ctx, `!!document.querySelector('#col-pending li[data-taskid="2"]')`, 5*time.Second)

	// Opening the old id shows its lineage's head.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.base+"/#"+s.ID)))
	waitFor(t, ctx, fmt.Sprintf(`location.hash === '#' + %q && document.querySelectorAll('#col-pending li').length === 2`, next), 5*time.Second)
}

func TestBoardRefusesWithoutToken(t *testing.T) {
	// Ensures a request without the token, with a wrong one, for another
	// Host (DNS rebinding) or with a method other than GET is refused, and
	// that bad requests get clear errors while the board serves on.
	t.Parallel()
	f := startBoard(t)
	s, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Secret"})
	require.NoError(t, err)

	ctx := tab(t)
	// The page holds no data and is served; without a token it has none.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.base+"/#"+s.ID)))
	waitFor(t, ctx, `document.getElementById('conn').textContent.includes('no token')`, 10*time.Second)
	text := eval[string](t, ctx, `document.body.textContent`)
	assert.NotContains(t, text, "Secret")
	res, err := chromedp.Run(ctx, chromedp.NavigateResponse(f.base+"/events"))
	require.NoError(t, err)
	assert.Equal(t, int64(http.StatusForbidden), res.Status)

	for _, c := range []struct {
		name, method, path, host string
		token                    bool
		code                     int
		body                     string
	}{
		{"NoToken", "GET", "/api/board?id=" + s.ID, "", false, 403, "token"},
		{"NoTokenEvents", "GET", "/events", "", false, 403, "token"},
		{"WrongToken", "GET", "/api/board?id=" + s.ID + "&token=" + strings.Repeat("0", len(f.token)), "", false, 403, "token"},
		{"WrongTokenInQuery", "GET", "/events?token=x", "", true, 403, "token"},
		{"BadHost", "GET", "/?token=" + f.token, "attacker.example:" + f.port, false, 403, "Host"},
		{"BadHostPort", "GET", "/?token=" + f.token, "127.0.0.1:1", false, 403, "Host"},
		{"Post", "POST", "/?token=" + f.token, "", false, 405, "read-only"},
		{"Delete", "DELETE", "/api/board?id=" + s.ID, "", true, 405, "read-only"},
		{"NoID", "GET", "/api/board", "", true, 400, "id=SESSION"},
		{"UnknownSession", "GET", "/api/board?id=ghost", "", true, 404, `no session \"ghost\"`},
		{"UnknownPath", "GET", "/nothing", "", true, 404, ""},
		{"NoListing", "GET", "/assets/", "", true, 404, ""},
		{"NoOtherAsset", "GET", "/assets/index.html", "", true, 404, ""},
		{"Script", "GET", "/assets/app.js", "", true, 200, "EventSource"},
		{"TokenInQuery", "GET", "/?token=" + f.token, "", false, 200, "tasksessiond board"},
		{"Localhost", "GET", "/", "localhost:" + f.port, true, 200, "tasksessiond board"},
		{"TokenHeader", "GET", "/api/board?id=" + s.ID, "", true, 200, `"title":"Secret"`},
		{"TokenQuery", "GET", "/api/board?id=" + s.ID + "&token=" + f.token, "", false, 200, `"title":"Secret"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, body := f.get(t, c.method, c.path, c.host, c.token)
			assert.Equal(t, c.code, res.StatusCode, body)
			assert.Contains(t, body, c.body)
			if c.code == 403 {
				assert.NotContains(t, body, "Secret")
			}
			if c.code == 405 {
				assert.Equal(t, "GET", res.Header.Get("Allow"))
			}
			assert.NotEmpty(t, res.Header.Get("Content-Security-Policy"))
		})
	}
}

func TestBoardTokenIsNoCookie(t *testing.T) {
	// Ensures the token never travels in a cookie, which a browser sends
	// for 127.0.0.1 to every port there (any local user's server among
	// them): opening the printed URL sets none, a cookie bearing the token
	// opens nothing, and the page sends the token with each request.
	t.Parallel()
	f := startBoard(t)
	s, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Secret"})
	require.NoError(t, err)
	for _, path := range []string{"/?token=" + f.token, "/api/board?id=" + s.ID + "&token=" + f.token} {
		res, _ := f.get(t, "GET", path, "", false)
		assert.Empty(t, res.Cookies(), path)
	}
	for _, name := range []string{"tasksessiond-board-" + f.port, "token"} {
		req, err := http.NewRequest("GET", f.base+"/api/board?id="+s.ID, nil)
		require.NoError(t, err)
		req.AddCookie(&http.Cookie{Name: name, Value: f.token})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusForbidden, res.StatusCode, "a cookie is no token")
	}

	ctx := tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"#"+s.ID)))
	waitFor(t, ctx, `document.body.dataset.ready === '1'`, 10*time.Second)
	assert.Equal(t, "live", eval[string](t, ctx, `document.getElementById('conn').textContent`))
	assert.Empty(t, eval[string](t, ctx, `document.cookie`))
	// A reload, the token gone from the address bar, still works.
	require.NoError(t, chromedp.Do(ctx, chromedp.Reload()))
	waitFor(t, ctx, `document.body.dataset.ready === '1' && document.getElementById('conn').textContent === 'live'`, 10*time.Second)
}

func TestBoardAnswersToTheAddressItListensOn(t *testing.T) {
	// Ensures `board --addr 127.0.0.2:0` prints a URL that works: the Host
	// check takes the address the board listens on.
	t.Parallel()
	f := startBoardAt(t, "127.0.0.2:0")
	require.Contains(t, f.url, "http://127.0.0.2:")
	s, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Here"})
	require.NoError(t, err)
	for _, u := range []string{f.url, f.base + "/api/board?id=" + s.ID + "&token=" + f.token} {
		res, err := http.Get(u)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, u)
	}
}

func TestBoardBoundsItsStreams(t *testing.T) {
	// Ensures at most MaxStreams event streams are open at once: the next
	// is refused with 503 and a message saying why, and one that closes
	// makes room.
	t.Parallel()
	f := startBoard(t)
	var open []*http.Response
	for range board.MaxStreams {
		res, err := http.Get(f.base + "/events?token=" + f.token)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		open = append(open, res)
	}
	res, body := f.get(t, "GET", "/events", "", true)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Contains(t, body, "at most 64 open pages")
	open[0].Body.Close()
	require.Eventually(t, func() bool {
		res, err := http.Get(f.base + "/events?token=" + f.token)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond)
	for _, r := range open[1:] {
		r.Body.Close()
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	// Ensures the board will not listen beyond this machine.
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		_, err := board.Listen(addr)
		assert.Error(t, err, addr)
	}
	ln, err := board.Listen("localhost:0")
	require.NoError(t, err)
	ln.Close()
}
