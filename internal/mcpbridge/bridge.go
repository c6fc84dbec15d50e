// Package mcpbridge serves the daemon's four Task tools to an MCP client
// over stdio (the official Go SDK), forwarding every call to the daemon.
// The tools' schemas and results are the daemon's own, unchanged.
package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksessiond/tasksessiond/client"
)

// Config configures a bridge.
type Config struct {
	Socket    string // the daemon's socket
	SessionID string // the session to serve; "" creates one
	Title     string // for a created session
	Create    bool   // create SessionID when it does not exist
	Version   string
	Logger    *slog.Logger
}

// Bridge is an MCP server bound to one daemon session.
type Bridge struct {
	c       *client.Client
	mu      sync.Mutex // guards session, which follows compactions
	session string
	created bool
	server  *mcp.Server
	log     *slog.Logger
}

// New connects to the daemon and resolves the session: a missing daemon or
// an unknown session is an error here, before any MCP client is served.
func New(ctx context.Context, cfg Config) (*Bridge, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := client.Dial(ctx, cfg.Socket)
	if err != nil {
		return nil, err
	}
	b := &Bridge{c: c, session: cfg.SessionID, log: cfg.Logger}
	if b.session == "" {
		s, err := c.CreateSession(ctx, client.CreateSession{Title: cfg.Title})
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("create a session: %w", err)
		}
		b.session, b.created = s.ID, true
	} else if _, err := c.GetSession(ctx, b.session); err != nil {
		if !cfg.Create || !errors.Is(err, client.ErrSessionNotFound) {
			c.Close()
			return nil, fmt.Errorf("session %s: %w (pass --create to create it)", b.session, err)
		}
		if _, err := c.CreateSession(ctx, client.CreateSession{SessionID: b.session, Title: cfg.Title}); err != nil && !errors.Is(err, client.ErrSessionExists) {
			c.Close()
			return nil, fmt.Errorf("create session %s: %w", b.session, err)
		}
		b.created = true
	}

	defs, err := c.ListTools(ctx, "agent", "mcp")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("list tools: %w", err)
	}
	b.server = mcp.NewServer(&mcp.Implementation{Name: "tasksessiond", Title: "Session task list", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: instructions(b.session), Logger: cfg.Logger})
	for _, raw := range defs {
		var d struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			c.Close()
			return nil, fmt.Errorf("decode tool definition: %w", err)
		}
		b.server.AddTool(&mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema}, b.forward(d.Name))
	}
	return b, nil
}

func instructions(session string) string {
	return "These tools keep your task list for this session (tasksessiond session " + session + "). " +
		"Plan multi-step work with TaskCreate, keep it current with TaskUpdate, and check it with TaskList; " +
		"the list survives restarts and context compaction."
}

// SessionID is the daemon session the bridge serves.
func (b *Bridge) SessionID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session
}

// Created reports whether the bridge created its session.
func (b *Bridge) Created() bool { return b.created }

// Run serves MCP on t until the client goes or ctx ends.
func (b *Bridge) Run(ctx context.Context, t mcp.Transport) error {
	defer b.c.Close()
	return b.server.Run(ctx, t)
}

// forward returns the handler that sends a tool call to the daemon. When
// the session has been compacted (by the host, e.g. with `tasksessiond
// compact`), it follows to the successor and sends the call there.
func (b *Bridge) forward(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args any
		if req.Params.Arguments != nil {
			args = req.Params.Arguments
		}
		for range 8 { // a chain of compactions, followed a bounded number of steps
			session := b.SessionID()
			res, err := b.c.CallTool(ctx, client.ToolCall{SessionID: session, Name: name, Arguments: args})
			var ce *client.Error
			if errors.As(err, &ce) && errors.Is(err, client.ErrSessionSealed) && ce.SuccessorID() != "" {
				b.log.Info("session compacted; following it", slog.String("from", session), slog.String("to", ce.SuccessorID()))
				b.mu.Lock()
				if b.session == session {
					b.session = ce.SuccessorID()
				}
				b.mu.Unlock()
				continue
			}
			if err != nil {
				return nil, err
			}
			out := &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: res.Text()}}}
			var raw struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			}
			if json.Unmarshal(res.Raw, &raw) == nil && len(raw.StructuredContent) > 0 {
				out.StructuredContent = raw.StructuredContent
			}
			return out, nil
		}
		return nil, fmt.Errorf("session %s: too many compactions to follow", b.SessionID())
	}
}
