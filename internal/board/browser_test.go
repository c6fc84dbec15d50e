package board_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/board"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

// One browser serves every test and benchmark of this binary: starting
// Chromium costs about a second, a tab a few milliseconds.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// chromiumPath finds Debian's chromium (or another Chrome) on PATH. With
// install, a missing one is installed with apt-get when we run as root, as
// CI does (.ci/run installs it too).
func chromiumPath(tb testing.TB, install bool) (string, error) {
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	find := func() string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p, nil
	}
	if !install {
		return "", fmt.Errorf("no chromium on PATH")
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		return "", fmt.Errorf("no chromium on PATH, and no apt-get as root to install it (apt-get install chromium)")
	}
	tb.Logf("installing chromium with apt-get (once per machine)")
	out, err := exec.Command("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("apt-get install chromium: %v\n%s", err, out)
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("apt-get installed chromium, but it is not on PATH")
}

// tab opens a tab of the shared browser in a browser context of its own
// (its own cookies), closed when tb ends. Without a browser, tests install
// one and benchmarks are skipped.
func tab(tb testing.TB) context.Context {
	tb.Helper()
	_, isBench := tb.(*testing.B)
	browser.once.Do(func() {
		path, err := chromiumPath(tb, !isBench)
		if err != nil {
			browser.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox, // we run as root in CI, where Chromium's sandbox will not start
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.WindowSize(1280, 860),
		)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil { // starts the browser
			cancelCtx()
			cancelAlloc()
			browser.err = fmt.Errorf("start %s: %w", path, err)
			return
		}
		browser.ctx = ctx
		browser.cancel = func() { cancelCtx(); cancelAlloc() }
	})
	if browser.err != nil {
		tb.Skipf("no browser: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	tb.Cleanup(cancel)
	require.NoError(tb, chromedp.Do(ctx)) // opens the tab
	return ctx
}

// fixture is a real daemon on a real socket and database, a board serving
// it on a free port, and a client to make changes with.
type fixture struct {
	d     *testutil.Daemon
	c     *client.Client
	b     *board.Server
	url   string // as printed: with the token
	base  string // http://127.0.0.1:PORT
	port  string
	token string
}

func startBoard(tb testing.TB) *fixture {
	tb.Helper()
	return startBoardAt(tb, "127.0.0.1:0")
}

// startBoardAt is startBoard listening on addr.
func startBoardAt(tb testing.TB, addr string) *fixture {
	tb.Helper()
	d := testutil.StartDaemon(tb, testutil.MustOpenDB(tb))
	b, err := board.New(board.Config{Dial: func(ctx context.Context) (*client.Client, error) {
		return client.Dial(ctx, d.Socket)
	}})
	require.NoError(tb, err)
	ln, err := board.Listen(addr)
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		require.NoError(tb, <-done)
	})
	f := &fixture{d: d, c: d.Dial(tb), b: b, url: b.URL(ln), token: b.Token()}
	f.base, _, _ = strings.Cut(f.url, "/?")
	_, f.port, _ = strings.Cut(strings.TrimPrefix(f.base, "http://"), ":")
	return f
}

// get makes a plain HTTP request to the board, with a Host header of
// choice, and the token in its header when withToken is set (as the page
// sends it).
func (f *fixture) get(tb testing.TB, method, path, host string, withToken bool) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(method, f.base+path, nil)
	require.NoError(tb, err)
	if host != "" {
		req.Host = host
	}
	if withToken {
		req.Header.Set(board.TokenHeader, f.token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(tb, err)
	return res, string(body)
}

// waitFor polls a JavaScript expression in the page until it is true.
func waitFor(tb testing.TB, ctx context.Context, expr string, timeout time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(10*time.Millisecond)))
	if err != nil {
		html, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		tb.Fatalf("waiting for %s: %v\npage text:\n%s", expr, err, html)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb testing.TB, ctx context.Context, expr string) T {
	tb.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(tb, err, expr)
	return v
}
