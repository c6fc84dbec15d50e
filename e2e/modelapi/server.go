package modelapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Config configures a Server.
type Config struct {
	// Respond scripts the replies (see Script and Steps).
	Respond Responder
	// Classify sets each request's Kind (default: every request is KindMain).
	// A host harness knows its host's side requests.
	Classify func(*Request) string
	// Default answers what Respond leaves: side requests (default: a
	// short text). A main request Respond leaves gets a text saying so,
	// and is logged.
	Default func(*Request) Reply
}

// Server is a scripted model API on 127.0.0.1. It serves every provider's
// paths at once; point a host at URL.
type Server struct {
	URL string

	tb  testing.TB
	cfg Config
	srv *httptest.Server

	respondMu sync.Mutex // Respond is called one request at a time

	mu       sync.Mutex
	reqs     []*Request
	others   []string      // "METHOD /path" of requests that are not model turns
	changed  chan struct{} // closed and replaced at each new request
	unscript []int         // main requests Respond left unanswered
	closed   bool
}

// provider is one model API's wire format.
type provider interface {
	// decode fills r's view from r.Raw.
	decode(r *Request) error
	// write answers r with reply, streaming when r.Stream.
	write(w http.ResponseWriter, r *Request, reply Reply)
}

// New starts a Server, closed at the end of the test.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := &Server{tb: tb, cfg: cfg, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.turn("anthropic", anthropic{}))
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("POST /v1/responses", s.turn("responses", responses{})) // Codex CLI
	mux.HandleFunc("POST /v1/chat/completions", s.turn("chat", chat{}))    // OpenCode
	mux.HandleFunc("POST /v1beta/models/{op}", s.geminiModels())           // Gemini CLI
	mux.HandleFunc("/", s.other)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server, waiting for requests in flight.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.srv.Close()
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		s.tb.Logf("modelapi: "+format, args...)
	}
}

func (s *Server) turn(name string, p provider) http.HandlerFunc {
	return func(w http.ResponseWriter, hr *http.Request) {
		body, err := io.ReadAll(hr.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r := &Request{Provider: name, Path: hr.URL.Path, Header: hr.Header.Clone(), Raw: body}
		if err := p.decode(r); err != nil {
			s.logf("%s %s: cannot decode the request: %v", hr.Method, hr.URL.Path, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Kind = KindMain
		if s.cfg.Classify != nil {
			r.Kind = s.cfg.Classify(r)
		}
		s.record(r)
		reply := s.respond(r)
		reply.ToolUses = append([]ToolUse(nil), reply.ToolUses...)
		for i := range reply.ToolUses {
			if reply.ToolUses[i].ID == "" {
				reply.ToolUses[i].ID = fmt.Sprintf("toolu_e2e_%d_%d", r.Seq, i+1)
			}
		}
		s.mu.Lock()
		r.Reply = reply
		s.mu.Unlock()
		p.write(w, r, reply)
	}
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) respond(r *Request) Reply {
	s.respondMu.Lock()
	defer s.respondMu.Unlock()
	if s.cfg.Respond != nil {
		if reply, ok := s.cfg.Respond(r); ok {
			return reply
		}
	}
	if r.Kind == KindMain {
		s.logf("request %d (main) has no scripted reply; last user text: %.200q", r.Seq, r.LastUserText())
		s.mu.Lock()
		s.unscript = append(s.unscript, r.Seq)
		s.mu.Unlock()
		return Text("modelapi: no scripted reply for this request.")
	}
	if s.cfg.Default != nil {
		return s.cfg.Default(r)
	}
	return Text("OK")
}

func (s *Server) countTokens(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	s.noteOther(hr)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"input_tokens":%d}`, estimateTokens(body))
}

// other answers any path that is not a model turn with an empty JSON
// object, and logs it once.
func (s *Server) other(w http.ResponseWriter, hr *http.Request) {
	io.Copy(io.Discard, hr.Body)
	if s.noteOther(hr) {
		s.logf("unknown path: %s %s", hr.Method, hr.URL.Path)
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{}`)
}

// noteOther records a request that is not a model turn; it reports
// whether its method and path are new.
func (s *Server) noteOther(hr *http.Request) bool {
	key := hr.Method + " " + hr.URL.Path
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.others {
		if o == key {
			return false
		}
	}
	s.others = append(s.others, key)
	return true
}

func estimateTokens(body []byte) int { return len(body)/4 + 1 }

// Requests returns every model request so far, of every kind, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.reqs))
	for i, r := range s.reqs {
		c := *r
		out[i] = &c
	}
	return out
}

// Of returns the requests of one kind, in order.
func (s *Server) Of(kind string) []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// Main returns the requests of the scripted conversation, in order.
func (s *Server) Main() []*Request { return s.Of(KindMain) }

// LastMain returns the last main request; it fails the test if there is none.
func (s *Server) LastMain(tb testing.TB) *Request {
	tb.Helper()
	m := s.Main()
	if len(m) == 0 {
		tb.Fatalf("modelapi: no main request was made\n%s", s.Dump())
	}
	return m[len(m)-1]
}

// Others returns "METHOD /path" of each distinct request that was not a
// model turn (count_tokens, unknown paths), in order of first arrival.
func (s *Server) Others() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.others...)
}

// Unscripted returns the Seq of main requests the script did not answer.
func (s *Server) Unscripted() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.unscript...)
}

// Wait waits until cond holds for the requests so far, or fails the test
// after timeout.
func (s *Server) Wait(tb testing.TB, timeout time.Duration, what string, cond func([]*Request) bool) {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s.Requests()) {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("modelapi: timed out after %v waiting for %s\n%s", timeout, what, s.Dump())
		}
	}
}

// Dump describes every request, one block each, for a failing test's log.
// A request that continues the previous one of its kind shows only its new
// messages; <system-reminder> blocks are cut short.
func (s *Server) Dump() string {
	var b strings.Builder
	prev := map[string]int{} // kind -> message count of the last request of that kind
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s model=%s stream=%v tools=%d messages=%d\n", r.Seq, r.Kind, r.Path, r.Model, r.Stream, len(r.Tools), len(r.Messages))
		from := 0
		if n := prev[r.Kind]; n > 0 && n <= len(r.Messages) {
			from = n - 1 // the last one again: it often gains blocks
			fmt.Fprintf(&b, "  (messages 0-%d as before)\n", from-1)
		}
		prev[r.Kind] = len(r.Messages)
		for i := from; i < len(r.Messages); i++ {
			m := r.Messages[i]
			for _, bl := range m.Blocks {
				switch bl.Type {
				case BlockToolUse:
					fmt.Fprintf(&b, "  [%d %s] tool_use %s %s %s\n", i, m.Role, bl.ToolUseID, bl.Name, bl.Input)
				case BlockToolResult:
					fmt.Fprintf(&b, "  [%d %s] tool_result %s (%s) error=%v: %q\n", i, m.Role, bl.ToolUseID, bl.Name, bl.IsError, clip(bl.Text, 400))
				default:
					fmt.Fprintf(&b, "  [%d %s] %s: %q\n", i, m.Role, bl.Type, clip(bl.Text, 400))
				}
			}
		}
		if len(r.Reply.ToolUses) > 0 || r.Reply.Text != "" || r.Reply.Error != nil {
			fmt.Fprintf(&b, "  reply: %q", clip(r.Reply.Text, 200))
			for _, u := range r.Reply.ToolUses {
				fmt.Fprintf(&b, " %s(%v)", u.Name, u.Input)
			}
			if r.Reply.Error != nil {
				fmt.Fprintf(&b, " error %d %s", r.Reply.Error.Status, r.Reply.Error.Message)
			}
			b.WriteByte('\n')
		}
	}
	if o := s.Others(); len(o) > 0 {
		fmt.Fprintf(&b, "other requests: %s\n", strings.Join(o, ", "))
	}
	return b.String()
}

// clip shortens s to about n bytes, and a <system-reminder> block to its start.
func clip(s string, n int) string {
	if strings.HasPrefix(s, "<system-reminder>") && n > 80 {
		n = 80
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
