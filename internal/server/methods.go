package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// method is a served method: it reads its params into their type, once,
// and serves them.
type method func(ctx context.Context, c *conn, params jsontext.Value) (any, error)

// methods is the one table of the served JSON-RPC methods.
func (s *Server) methods() map[string]method {
	return map[string]method{
		wire.MethodToolsList: with(wire.MethodToolsList, s.toolsList),
		wire.MethodToolsCall: with(wire.MethodToolsCall, s.toolsCall),
		wire.MethodSessionsCreate: with(wire.MethodSessionsCreate, func(ctx context.Context, p wire.CreateSession) (wire.SessionResult, error) {
			info, err := s.mgr.Create(ctx, p)
			return wire.SessionResult{Session: info}, err
		}),
		wire.MethodSessionsResume: with(wire.MethodSessionsResume, func(ctx context.Context, p wire.SessionText) (wire.Resumed, error) {
			r, err := s.mgr.Resume(ctx, p.SessionID)
			if err == nil && p.MaxChars > 0 {
				r.Messages = slices.Clone(r.Messages) // the session's own may be shared
				for i, m := range r.Messages {
					if m.Kind == compact.KindTaskSnapshot {
						r.Messages[i].Content = compact.FitText(m.Content, p.MaxChars)
					}
				}
			}
			return r, err
		}),
		wire.MethodSessionsGet: with(wire.MethodSessionsGet, func(ctx context.Context, p wire.SessionRef) (wire.SessionResult, error) {
			info, err := s.mgr.Get(ctx, p.SessionID)
			return wire.SessionResult{Session: info}, err
		}),
		wire.MethodSessionsList:   with(wire.MethodSessionsList, s.sessionsList),
		wire.MethodSessionsReplay: with(wire.MethodSessionsReplay, s.mgr.Replay),
		wire.MethodSessionsSnapshot: with(wire.MethodSessionsSnapshot, func(ctx context.Context, p wire.SessionText) (wire.Snapshot, error) {
			snap, err := s.mgr.Snapshot(ctx, p.SessionID)
			if err == nil && p.MaxChars > 0 && tools.Length(snap.Text) > p.MaxChars {
				snap.Text = compact.TextWithin(snap.Tasks, snap.NextTaskid, p.MaxChars)
			}
			return snap, err
		}),
		wire.MethodSessionsCompact:  with(wire.MethodSessionsCompact, s.mgr.Compact),
		wire.MethodSessionsWatch:    withConn(wire.MethodSessionsWatch, s.watch),
		wire.MethodSessionsWatchAll: withConn(wire.MethodSessionsWatchAll, s.watchAll),
		wire.MethodDaemonStatus:     with(wire.MethodDaemonStatus, s.daemonStatus),
	}
}

// with makes a method of fn, which takes its params as P.
func with[P, R any](name string, fn func(context.Context, P) (R, error)) method {
	return withConn(name, func(ctx context.Context, _ *conn, p P) (any, error) { return fn(ctx, p) })
}

// withConn is with, for a method that needs its connection. Params are
// read strictly: a member P does not take is refused, so that a misspelt
// "session_id" is reported instead of ignored.
func withConn[P any](name string, fn func(context.Context, *conn, P) (any, error)) method {
	return func(ctx context.Context, c *conn, params jsontext.Value) (any, error) {
		var p P
		if len(params) > 0 && params.Kind() != 'n' {
			twice, err := jsonrpc.Unmarshal(params, &p, jsonv2.RejectUnknownMembers(true))
			if e := jsonrpc.ParamsError(name, twice, err); e != nil {
				return nil, e
			}
		}
		return fn(ctx, c, p)
	}
}

// Methods lists the served method names, sorted.
func (s *Server) Methods() []string {
	var names []string
	for name := range s.table {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
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
		if out.Tools[i], err = jsonrpc.Encode(nil, d); err != nil {
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

func (s *Server) sessionsList(ctx context.Context, p tasksessiond.ListFilter) (wire.ListSessionsResult, error) {
	list, next, err := s.mgr.List(ctx, p)
	if err != nil {
		return wire.ListSessionsResult{}, err
	}
	return wire.ListSessionsResult{Sessions: list, NextCursor: next}, nil
}

func (s *Server) daemonStatus(ctx context.Context, _ struct{}) (wire.DaemonStatus, error) {
	st, err := s.mgr.Stats(ctx)
	if err != nil {
		return wire.DaemonStatus{}, err
	}
	up := s.mgr.Uptime()
	out := wire.DaemonStatus{Version: s.cfg.Version, Uptime: up.Round(1e6).String(), UptimeSeconds: up.Seconds(),
		Database: s.cfg.Database, Socket: s.cfg.Socket, PID: s.pid, CallsServed: st.CallsServed,
		WAL: st.WAL, Fleet: st.Fleet, Problem: st.Problem, Refused: st.Refused}
	out.Sessions.Loaded, out.Sessions.Total = st.Loaded, st.Total
	return out, nil
}
