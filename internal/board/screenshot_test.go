package board_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/tasksessiond/tasksessiond/wire"
)

// envScreenshot names the PNG TestScreenshot writes (relative to the
// repository's root): TASKSESSIOND_SCREENSHOT=docs/board.png go test -run
// TestScreenshot ./internal/board/
const envScreenshot = "TASKSESSIOND_SCREENSHOT"

func TestScreenshot(t *testing.T) {
	// Ensures docs/OPERATIONS.md's picture of the board is made by the page itself,
	// from a few sessions as agents leave them.
	path := os.Getenv(envScreenshot)
	if path == "" {
		t.Skip(envScreenshot + " is not set")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", "..", path)
	}
	f := startBoard(t)
	mk := func(title, meta string, tasks [][3]string) string {
		s, err := f.c.CreateSession(bg, wire.CreateSession{Title: title, Metadata: json.RawMessage(meta)})
		require.NoError(t, err)
		for i, task := range tasks {
			createTask(t, f.c, s.ID, task[0], task[1])
			if task[2] != "pending" {
				updateTask(t, f.c, s.ID, i+1, task[2])
			}
		}
		return s.ID
	}
	mk("Fix the flaky CI job", `{"host":"codex","directory":"~/src/ci"}`, [][3]string{
		{"Reproduce the failure locally", "", "completed"},
		{"Pin the container image", "", "inprogress"},
		{"Add a retry around the upload step", "", "pending"},
	})
	mk("Docs for the 0.2 release", `{"host":"opencode","directory":"~/src/site"}`, [][3]string{
		{"Outline the changes", "", "completed"},
		{"Write the upgrade notes", "", "completed"},
		{"Screenshots", "", "completed"},
	})
	auth := mk("Refactor the auth middleware", `{"host":"claude-code","directory":"~/src/api"}`, [][3]string{
		{"Read the current middleware", "Trace how a request's token is checked today.", "completed"},
		{"List every route that reads the session", "", "completed"},
		{"Extract the token check into one function", "One place to check expiry, audience and scope.", "inprogress"},
		{"Write tests for expired and forged tokens", "Table-driven; include a token signed by another key.", "pending"},
		{"Move the routes to the new middleware", "", "pending"},
		{"Delete the old session helper", "", "pending"},
		{"Try a cookie-based fallback", "Dropped: the API is token-only.", "deleted"},
	})
	out, err := f.c.Compact(bg, wire.Compact{SessionID: auth, Summary: "Work on the auth middleware so far."})
	require.NoError(t, err)

	ctx := tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 760), chromedp.Navigate(f.url+"#"+out.Session.ID)))
	waitFor(t, ctx, `document.body.dataset.ready === '1' && window.__board.complete > 0`, 10*time.Second)
	time.Sleep(300 * time.Millisecond)                          // let the row's counts settle
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("wrote %s (%d bytes)", path, len(png))
}
