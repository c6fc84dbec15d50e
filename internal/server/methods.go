package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

type handler func(ctx context.Context, c *conn, params json.RawMessage) (any, error)

// methods are the served JSON-RPC methods, each given its name.
func (s *Server) methods() map[string]handler {
	named := map[string]func(method string) handler{
		wire.MethodToolsList: with(s.toolsList),
		wire.MethodToolsCall: with(s.toolsCall),
		wire.MethodSessionsCreate: with(func(ctx context.Context, p wire.CreateSession) (wire.SessionResult, error) {
			info, err := s.mgr.Create(ctx, p)
			return wire.SessionResult{Session: info}, err
		}),
		wire.MethodSessionsResume: with(func(ctx context.Context, p wire.SessionRef) (wire.Resumed, error) {
			return s.mgr.Resume(ctx, p.SessionID)
		}),
		wire.MethodSessionsGet: with(func(ctx context.Context, p wire.SessionRef) (wire.SessionResult, error) {
			info, err := s.mgr.Get(ctx, p.SessionID)
			return wire.SessionResult{Session: info}, err
		}),
		wire.MethodSessionsList:   with(s.sessionsList),
		wire.MethodSessionsReplay: with(s.mgr.Replay),
		wire.MethodSessionsSnapshot: with(func(ctx context.Context, p wire.SessionRef) (wire.Snapshot, error) {
			return s.mgr.Snapshot(ctx, p.SessionID)
		}),
		wire.MethodSessionsCompact:  with(s.mgr.Compact),
		wire.MethodSessionsWatch:    s.sessionsWatch,
		wire.MethodSessionsWatchAll: s.sessionsWatchAll,
		wire.MethodDaemonStatus:     with(s.daemonStatus),
	}
	out := make(map[string]handler, len(named))
	for method, h := range named {
		out[method] = h(method)
	}
	return out
}

// with makes a method of fn: the params are decoded strictly into P (see
// decode) and passed on.
func with[P, R any](fn func(context.Context, P) (R, error)) func(method string) handler {
	return func(method string) handler {
		return func(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
			var p P
			if err := decode(method, params, &p); err != nil {
				return nil, err
			}
			return fn(ctx, p)
		}
	}
}

// Methods lists the served method names, sorted.
func (s *Server) Methods() []string {
	var names []string
	for name := range s.handlers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// decode unmarshals params strictly: an unknown field is an error, so that
// a misspelt "session_id" is reported instead of ignored.
func decode(method string, params json.RawMessage, v any) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		params = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		return jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for %s: %s", method, msg)
	}
	return nil
}

func (s *Server) toolsList(_ context.Context, p wire.ToolsList) (wire.ToolsListResult, error) {
	role, err := tools.ParseRole(p.Role)
	if err != nil {
		return wire.ToolsListResult{}, jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for tools/list: %v", err)
	}
	format, err := tools.ParseFormat(p.Format)
	if err != nil {
		return wire.ToolsListResult{}, jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for tools/list: %v", err)
	}
	defs := tools.Render(tools.Defs(role), format)
	out := wire.ToolsListResult{Tools: make([]json.RawMessage, len(defs))}
	for i, d := range defs {
		if out.Tools[i], err = json.Marshal(d); err != nil {
			return wire.ToolsListResult{}, fmt.Errorf("encode tool %d: %w", i, err)
		}
	}
	return out, nil
}

func (s *Server) toolsCall(ctx context.Context, p wire.ToolCall) (json.RawMessage, error) {
	if p.Name == "" {
		return nil, jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for tools/call: \"name\" is required (one of %s)", strings.Join(tools.Names(), ", "))
	}
	return s.mgr.Call(ctx, p)
}

func (s *Server) sessionsList(ctx context.Context, p wire.ListSessions) (wire.ListSessionsResult, error) {
	list, next, err := s.mgr.List(ctx, p)
	if err != nil {
		return wire.ListSessionsResult{}, err
	}
	return wire.ListSessionsResult{Sessions: list, NextCursor: next}, nil
}

func (s *Server) daemonStatus(ctx context.Context, _ struct{}) (wire.Status, error) {
	st, err := s.mgr.Stats(ctx)
	if err != nil {
		return wire.Status{}, err
	}
	up := s.mgr.Uptime()
	out := wire.Status{Version: s.cfg.Version, Uptime: up.Round(1e6).String(), UptimeSeconds: up.Seconds(),
		Database: s.cfg.Database, Socket: s.cfg.Socket, PID: s.pid, CallsServed: st.CallsServed,
		WAL: st.WAL}
	out.Sessions.Loaded, out.Sessions.Total = st.Loaded, st.Total
	return out, nil
}
