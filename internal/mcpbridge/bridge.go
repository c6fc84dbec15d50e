// Package mcpbridge serves the daemon's four Task tools to an MCP client
// over stdio (the official Go SDK), forwarding every call to the daemon.
// The tools' input schemas and result texts are the daemon's own; the
// structured results are left out (see New).
//
// The bridge outlives the daemon: when the connection breaks it redials
// with backoff, and every write carries a callId, so a write resent after
// a reconnect is applied once. It follows its session through compactions,
// for reads as well as writes.
package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// DefaultReconnectWait is how long a call waits for an unreachable daemon
// before it is answered with an error result.
const DefaultReconnectWait = 5 * time.Second

// Config configures a bridge.
type Config struct {
	Socket    string // the daemon's socket, for messages
	SessionID string // the session to serve; "" creates one on first use
	Title     string // for a created session
	Create    bool   // create SessionID on first use when it does not exist
	// Server is the bridge's name in the host's configuration, by which
	// its calls are found in a transcript ("" takes any server's).
	Server  string
	Version string
	Logger  *slog.Logger
	// SDKLogger receives the MCP SDK's own log (nil: none). It logs a
	// host's ordinary goodbye (SIGINT at exit) as an error, so it is for
	// --verbose only.
	SDKLogger *slog.Logger
	// Dial connects to the daemon (and may start it); nil dials Socket.
	Dial func(ctx context.Context) (*client.Client, error)
	// Bound, when set, is asked before each call which host conversation
	// the bridge now serves: a host may keep one MCP server through
	// /clear, which starts a new conversation with a new list. A new
	// answer rebinds the bridge to that session; an ID of "" keeps the
	// current one. A session created on first use (Create) is rebuilt
	// from the conversation's transcript, read by History, when it holds
	// Task calls (a fork's copied history).
	Bound   func() binding.Conversation
	History host.History
	// Transcript, when set, names the transcript of a conversation no
	// binding named one for.
	Transcript func(id string) string
	// Clients are the hosts recognised by what their MCP client sends:
	// a TaskList result is fitted to the bound of the host that asked.
	Clients []host.Client
	// FollowMeta binds each call to the conversation its MCP _meta names
	// (as a Client reads it), created on first use. For a bridge given
	// no fixed session.
	FollowMeta bool
	// ReconnectWait bounds how long one call waits for the daemon to come
	// back; 0 means DefaultReconnectWait.
	ReconnectWait time.Duration
}

// Bridge is an MCP server bound to one daemon session at a time.
type Bridge struct {
	cfg    Config
	server *mcp.Server
	log    *slog.Logger

	cmu sync.Mutex // guards c
	c   *client.Client

	mu       sync.Mutex // guards the fields below
	bound    string     // the host conversation last seen through Bound
	history  string     // its transcript
	session  string     // the session served; follows compactions
	resolved bool       // session has been looked up (or created) in the daemon
}

// New makes a bridge. It needs no daemon: the tools' definitions are
// built in, so a host that starts before the daemon still lists them, and
// the session is looked up (or created) on the first call.
func New(cfg Config) (*Bridge, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReconnectWait <= 0 {
		cfg.ReconnectWait = DefaultReconnectWait
	}
	if cfg.Dial == nil {
		cfg.Dial = func(ctx context.Context) (*client.Client, error) { return client.Dial(ctx, cfg.Socket) }
	}
	b := &Bridge{cfg: cfg, session: cfg.SessionID, log: cfg.Logger}
	b.server = mcp.NewServer(&mcp.Implementation{Name: "tasksessiond", Title: "Session task list", Version: cfg.Version},
		&mcp.ServerOptions{Logger: cfg.SDKLogger})
	for _, d := range tools.Render(tools.Defs(tools.RoleAgent), tools.FormatMCP) {
		raw, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("encode tool definition: %w", err)
		}
		var t mcp.Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("decode tool definition: %w", err)
		}
		// Text only: a host shows the model the structured result, when
		// there is one, as JSON (two of the four hosts do), and the text is
		// the leaner of the two; a tool with an outputSchema must send it.
		t.OutputSchema = nil
		b.server.AddTool(&t, b.forward(t.Name, t.Annotations == nil || !t.Annotations.ReadOnlyHint))
	}
	return b, nil
}

// SessionID is the daemon session the bridge serves now ("" until the
// first call when it creates one).
func (b *Bridge) SessionID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session
}

// Run serves MCP on t until the client goes or ctx ends. Every request
// read before the client's end of input is answered first.
func (b *Bridge) Run(ctx context.Context, t mcp.Transport) error {
	defer func() {
		b.cmu.Lock()
		if b.c != nil {
			b.c.Close()
		}
		b.cmu.Unlock()
	}()
	return b.server.Run(ctx, answerAll{t})
}

// unreachable is a transport failure: the daemon did not answer.
type unreachable struct{ err error }

func (u unreachable) Error() string { return u.err.Error() }

// do runs fn on a live connection. When the daemon cannot be reached, or
// the connection breaks under fn, it redials with backoff and runs fn
// again, for at most ReconnectWait. Errors the daemon answered are
// returned at once.
func (b *Bridge) do(ctx context.Context, fn func(*client.Client) error) error {
	deadline := time.Now().Add(b.cfg.ReconnectWait)
	delay := 20 * time.Millisecond
	for {
		c, err := b.conn(ctx)
		if err == nil {
			err = fn(c)
			if !errors.Is(err, client.ErrClosed) || ctx.Err() != nil {
				return err // a success, or the daemon's answer
			}
			b.broken(c, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, client.ErrUntrusted) {
			return err // not the daemon: nothing to wait for
		}
		if time.Now().Add(delay).After(deadline) {
			return unreachable{err}
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, time.Second)
	}
}

func (b *Bridge) conn(ctx context.Context) (*client.Client, error) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	if b.c != nil {
		return b.c, nil
	}
	c, err := b.cfg.Dial(ctx)
	if err != nil {
		return nil, err
	}
	b.log.Info("connected to the daemon", slog.String("socket", b.cfg.Socket))
	b.c = c
	return c, nil
}

// broken drops a connection that failed, so the next call redials.
func (b *Bridge) broken(c *client.Client, err error) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	if b.c == c {
		b.log.Warn("lost the daemon connection; redialling", slog.Any("err", err))
		b.c = nil
		go c.Close()
	}
}

// callTimeout bounds one tool call, so that a daemon that takes the
// connection but never answers (stopped, wedged) does not hang the host.
const callTimeout = 30 * time.Second

// maxFollow bounds the compactions one call follows.
const maxFollow = 8

// forward returns the handler that sends a tool call to the daemon.
func (b *Bridge) forward(name string, writes bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		call := client.ToolCall{Name: name}
		if req.Params.Arguments != nil {
			call.Arguments = req.Params.Arguments
		}
		if writes {
			// The same id on every attempt: a write the daemon committed
			// before the connection broke is answered from the log when
			// it is sent again, not applied twice.
			call.CallID = "mcp-" + uuid.Must(uuid.NewV7()).String()
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		meta, budget := b.host(req)
		if name != tools.TaskList {
			budget = 0
		}
		var res *wire.CallToolResult
		err := b.do(ctx, func(c *client.Client) error {
			var err error
			var session string
			res, session, err = b.call(ctx, c, call, writes, meta, req.Params.Meta)
			if err == nil && budget > 0 {
				res, err = refit(ctx, c, res, session, budget)
			}
			return err
		})
		if err != nil {
			return errorResult(b.explain(name, err)), nil
		}
		return &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: res.Text()}}}, nil
	}
}

// clientName is the MCP client's name, as it gave it at initialize.
func clientName(s *mcp.ServerSession) string {
	if s == nil {
		return ""
	}
	p := s.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return ""
	}
	return p.ClientInfo.Name
}

// host returns what the host that sent req asks of it: the conversation
// its _meta names, when the bridge follows those, and the byte bound of
// a TaskList result it shows its model (0: the daemon's own).
func (b *Bridge) host(req *mcp.CallToolRequest) (meta string, budget int) {
	for _, h := range b.cfg.Clients {
		if b.cfg.FollowMeta {
			meta = h.Conversation(req.Params.Meta)
		}
		if meta != "" || h.IsClient(clientName(req.Session)) {
			return meta, h.ResultBytes()
		}
	}
	return "", 0
}

// refit renders a TaskList result of session again within budget bytes
// when the daemon's (fitted to its own, larger limit) is longer: from the
// session's whole list, with the daemon's ladder.
func refit(ctx context.Context, c *client.Client, res *wire.CallToolResult, session string, budget int) (*wire.CallToolResult, error) {
	if res.IsError || len(res.Text()) <= budget {
		return res, nil
	}
	snap, err := c.Snapshot(ctx, session)
	if err != nil {
		return nil, err
	}
	fitted, err := json.Marshal(tools.ListResultWithin(snap.Tasks, budget, func(s string) int { return len(s) }))
	if err != nil {
		return nil, fmt.Errorf("encode the fitted TaskList: %w", err)
	}
	out := &wire.CallToolResult{Raw: fitted}
	if err := json.Unmarshal(fitted, out); err != nil {
		return nil, fmt.Errorf("decode the fitted TaskList: %w", err)
	}
	out.Raw = fitted
	return out, nil
}

// call makes one tool call on c in the session the bridge serves: it
// creates the session on first use, sends reads to the head of the lineage
// and follows a write refused by a sealed session to its successor.
func (b *Bridge) call(ctx context.Context, c *client.Client, call client.ToolCall, writes bool, meta string, callMeta mcp.Meta) (*wire.CallToolResult, string, error) {
	// The session this call goes to is settled once, here: another call
	// (another conversation of the host) may rebind the bridge meanwhile.
	session, err := b.ensure(ctx, c, meta, callMeta)
	if err != nil {
		return nil, "", err
	}
	for range maxFollow {
		if !writes {
			// A read on a sealed session would show its list as it was
			// at compaction; the head has every change since.
			s, err := c.Head(ctx, session)
			if err != nil {
				return nil, "", err
			}
			if s.ID != session {
				b.follow(session, s.ID)
				session = s.ID
			}
		}
		call.SessionID = session
		res, err := c.CallTool(ctx, call)
		var ce *client.Error
		if errors.As(err, &ce) && errors.Is(err, client.ErrSessionSealed) && ce.SuccessorID() != "" {
			b.follow(session, ce.SuccessorID())
			session = ce.SuccessorID()
			continue
		}
		return res, session, err
	}
	return nil, "", fmt.Errorf("session %s: more than %d compactions to follow in one call", session, maxFollow)
}

func (b *Bridge) follow(from, to string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session == from {
		b.log.Info("session compacted; following it", slog.String("from", from), slog.String("to", to))
		b.session = to
	}
}

// ensure settles the session a call goes to: it rebinds to the host's
// current conversation, and looks the session up (or creates it) on its
// first use. callMeta is the call's MCP _meta, by which the host's
// history finds the call.
func (b *Bridge) ensure(ctx context.Context, c *client.Client, meta string, callMeta mcp.Meta) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var conv binding.Conversation
	switch {
	case meta != "":
		conv = binding.Conversation{ID: meta}
	case b.cfg.Bound != nil:
		conv = b.cfg.Bound()
	}
	if conv.ID != "" && conv.ID != b.bound {
		if b.bound != "" || conv.ID != b.session {
			b.log.Info("the host is in another conversation; serving its list", slog.String("from", b.session), slog.String("to", conv.ID))
			b.session, b.resolved = conv.ID, false
		}
		b.bound, b.history = conv.ID, conv.Transcript
	}
	if b.resolved {
		return b.session, nil
	}
	if b.session == "" {
		s, err := c.CreateSession(ctx, wire.CreateSession{Title: b.cfg.Title})
		if err != nil {
			return "", fmt.Errorf("create a session: %w", err)
		}
		b.log.Info("created a session", slog.String("session", s.ID))
		b.session, b.resolved = s.ID, true
		return b.session, nil
	}
	s, err := c.Head(ctx, b.session)
	switch {
	case errors.Is(err, client.ErrSessionNotFound) && (b.cfg.Create || b.bound != ""):
		if err := b.create(ctx, c, callMeta); err != nil {
			return "", err
		}
	case errors.Is(err, client.ErrSessionNotFound):
		return "", fmt.Errorf("session %q not found; start the bridge with --create to create it on first use", b.session)
	case err != nil:
		return "", fmt.Errorf("session %s: %w", b.session, err)
	case s.ID != b.session:
		b.log.Info("session was compacted; serving the head of its lineage", slog.String("from", b.session), slog.String("to", s.ID))
		b.session = s.ID
	}
	b.resolved = true
	return b.session, nil
}

// create makes the session on its first use: from the Task calls of its
// conversation's transcript when there are any (a fork starts with the
// tasks it had at the fork point), else empty. The calls are those before
// this one (callMeta), read once the host has written them: a host may
// write its history after it made the call, and a list made before would
// start empty for good.
func (b *Bridge) create(ctx context.Context, c *client.Client, callMeta mcp.Meta) error {
	history := b.history
	if history == "" && b.cfg.Transcript != nil {
		history = b.cfg.Transcript(b.session)
	}
	if history != "" && b.cfg.History != nil {
		calls, err := b.cfg.History.CallsBefore(ctx, history, b.cfg.Server, callMeta)
		if err != nil {
			b.log.Warn("cannot read the conversation's transcript; starting an empty list", slog.Any("err", err))
		}
		if len(calls) > 0 {
			_, err := c.ReplaySession(ctx, b.session, calls)
			if err != nil && !errors.Is(err, client.ErrSessionExists) {
				return fmt.Errorf("rebuild session %s from its transcript: %w", b.session, err)
			}
			b.log.Info("session rebuilt from the conversation's transcript", slog.String("session", b.session), slog.Int("calls", len(calls)))
			return nil
		}
	}
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: b.session, Title: b.cfg.Title})
	if err != nil && !errors.Is(err, client.ErrSessionExists) {
		return err
	}
	b.log.Info("session created on first use", slog.String("session", b.session))
	return nil
}

// explain turns a failed call into words for the model.
func (b *Bridge) explain(name string, err error) string {
	var u unreachable
	if errors.As(err, &u) {
		b.log.Error("the daemon cannot be reached", slog.String("tool", name), slog.Any("err", u.err))
		return fmt.Sprintf("%s was not done: the task list is unavailable because the tasksessiond daemon cannot be reached (%v). "+
			"Ask the user to start it (tasksessiond serve); this tool reconnects by itself, so the same call can be retried then.", name, u.err)
	}
	if errors.Is(err, client.ErrUntrusted) {
		b.log.Error("refused the socket", slog.String("tool", name), slog.Any("err", err))
		return fmt.Sprintf("%s was not done: %v. Tell the user.", name, err)
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s failed: %s", name, ce.Message)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		b.log.Error("the daemon did not answer", slog.String("tool", name), slog.Duration("within", callTimeout))
		return fmt.Sprintf("%s may not have been done: the tasksessiond daemon did not answer within %v. "+
			"Check the list with TaskList before calling it again.", name, callTimeout)
	}
	return fmt.Sprintf("%s failed: %v", name, err)
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Error: " + msg}}}
}
