// Package board serves a read-only web page that shows every session and
// one session's tasks as a board, updated live from the daemon: the
// `tasksessiond board` command. It is a client of the daemon (one
// connection watching every session) and an HTTP server on loopback that
// takes only GET requests bearing its per-start token.
package board

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
)

//go:embed assets
var assets embed.FS

// Config is what a board needs.
type Config struct {
	// Dial connects to the daemon; the board calls it again to reconnect.
	Dial func(context.Context) (*client.Client, error)
	// Token is the secret a request must bear; empty makes a random one.
	Token  string
	Logger *slog.Logger
}

// Server is a board: the daemon side (a hub) and the HTTP side.
type Server struct {
	token string
	log   *slog.Logger
	hub   *hub
	first *client.Client // the connection Connect opened, for Serve
	done  chan struct{}  // closed when Serve stops: streams end
}

// New makes a board; Serve runs it.
func New(cfg Config) (*Server, error) {
	if cfg.Dial == nil {
		return nil, errors.New("board: no way to reach the daemon (Config.Dial is nil)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Token == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("board: make a token: %w", err)
		}
		cfg.Token = hex.EncodeToString(b)
	}
	return &Server{token: cfg.Token, log: cfg.Logger, hub: newHub(cfg.Dial, cfg.Logger), done: make(chan struct{})}, nil
}

// Token is the secret the board's URL carries.
func (b *Server) Token() string { return b.token }

// URL is the address to open: the listener's, with the token.
func (b *Server) URL(ln net.Listener) string {
	return "http://" + ln.Addr().String() + "/?token=" + b.token
}

// Connect makes the first connection to the daemon, so that a board that
// cannot reach it says so before it prints a URL. Serve does it otherwise.
func (b *Server) Connect(ctx context.Context) error {
	c, err := b.hub.dial(ctx)
	if err != nil {
		return err
	}
	b.first = c
	return nil
}

// Listen opens the board's listener on addr, which must be a loopback
// address ("127.0.0.1:0" picks a free port): the board is for the user at
// this machine only. The board answers to the address it listens on (and
// to localhost at its port).
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("board address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("board address %q: the board serves on a loopback address only (127.0.0.1, ::1, localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("board: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve follows the daemon and serves the page on ln until ctx ends.
func (b *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           b.Handler(ln.Addr().String()),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelWarn),
	}
	hctx, stop := context.WithCancel(ctx)
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		b.hub.run(hctx, b.first)
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	b.log.Info("board serving", slog.String("addr", ln.Addr().String()))
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	close(b.done) // the event streams return, so Shutdown need not wait for them
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); err == nil && serr != nil {
		err = fmt.Errorf("board: shut down: %w", serr)
	}
	stop()
	<-hubDone
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Handler is the board's HTTP side for a listener at addr (host:port):
// the guard around the page, its assets, the board API and the event
// stream.
func (b *Server) Handler(addr string) http.Handler {
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("/assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		// The page's two files, and no directory listing.
		switch name := r.PathValue("name"); name {
		case "app.js", "app.css":
			http.ServeFileFS(w, r, static, name)
		default:
			http.NotFound(w, r)
		}
	})
	mux.Handle("/api/board", b.needToken(http.HandlerFunc(b.apiBoard)))
	mux.Handle("/events", b.needToken(http.HandlerFunc(b.events)))
	return b.guard(addr, mux)
}

// TokenHeader carries the token on the page's requests (an EventSource,
// which cannot set one, puts it in the query).
const TokenHeader = "X-Board-Token"

// guard refuses, before anything else runs: a Host that is not this
// board's (a DNS-rebinding page names its own host) and any method but
// GET (the board changes nothing).
func (b *Server) guard(addr string, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	hosts := map[string]bool{strings.ToLower(addr): true, "127.0.0.1:" + port: true, "localhost:" + port: true, "[::1]:" + port: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !hosts[strings.ToLower(r.Host)] {
			b.log.Warn("board refused a request for another host", slog.String("host", r.Host), slog.String("remote", r.RemoteAddr))
			http.Error(w, "403 forbidden: this board answers only to Host "+addr+" (or localhost:"+port+")", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet {
			h.Set("Allow", http.MethodGet)
			http.Error(w, "405 method not allowed: the board is read-only (GET only)", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// needToken refuses a request for the board's data without the token, in
// the query (as printed, and from the page's event stream) or in the
// TokenHeader (the page's other requests). The token never travels in a
// cookie: a browser sends a cookie for 127.0.0.1 to every port there, any
// other local user's server among them. The page and its assets hold no
// data, and are served without it.
func (b *Server) needToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		given := r.URL.Query().Get("token")
		if given == "" {
			given = r.Header.Get(TokenHeader)
		}
		if subtle.ConstantTimeCompare([]byte(given), []byte(b.token)) != 1 {
			http.Error(w, "403 forbidden: a missing or wrong token; open the URL `tasksessiond board` printed (it ends with ?token=...)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiBoard answers GET /api/board?id=SESSION: the board of the newest
// session of id's lineage.
func (b *Server) apiBoard(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		jsonError(w, http.StatusBadRequest, "the query needs id=SESSION")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	bd, err := b.hub.board(ctx, id)
	switch {
	case err == nil:
	case errors.Is(err, client.ErrSessionNotFound):
		jsonError(w, http.StatusNotFound, fmt.Sprintf("no session %q", id))
		return
	case errors.Is(err, client.ErrInvalidParams), errors.Is(err, client.ErrInvalidRequest):
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, errDaemonDown):
		jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	default:
		b.log.Warn("board: read a session", slog.String("session", id), slog.Any("err", err))
		jsonError(w, http.StatusBadGateway, "the daemon: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(bd); err != nil {
		b.log.Debug("board: write a board", slog.Any("err", err))
	}
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// events is the page's server-sent event stream: a reset (every row) first,
// then each change. A page that falls behind has its stream ended; its
// EventSource reconnects by itself and starts from a reset.
func (b *Server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	sub, err := b.hub.subscribe()
	if err != nil {
		http.Error(w, "503 service unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer b.hub.unsubscribe(sub)
	w.WriteHeader(http.StatusOK)
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	write := func(p []byte) bool {
		// A page that stops reading must not hold a goroutine forever.
		rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := w.Write(p); err != nil {
			return false
		}
		return true
	}
	if !write([]byte("retry: 1000\n\n")) || rc.Flush() != nil {
		return
	}
	for {
		select {
		case msg := <-sub.ch:
			if !write(msg) {
				return
			}
			// Send what else is queued in the same flush.
			for more := true; more; {
				select {
				case msg := <-sub.ch:
					if !write(msg) {
						return
					}
				default:
					more = false
				}
			}
		case <-keepAlive.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case <-sub.gone:
			return
		case <-r.Context().Done():
			return
		case <-b.done:
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}
