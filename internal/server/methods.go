package server

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

type handler func(ctx context.Context, c *conn, params json.RawMessage) (any, error)

// methods are the served JSON-RPC methods, each given its name.
func (s *Server) methods() map[string]handler {
	named := map[string]func(method string) handler{
		"tools/list":      with(s.toolsList),
		"tools/call":      with(s.toolsCall),
		"sessions/create": with(s.sessionsCreate),
		"sessions/resume": with(func(ctx context.Context, p sessionParams) (session.Resumed, error) {
			return s.mgr.Resume(ctx, p.SessionID)
		}),
		"sessions/get":    with(s.sessionsGet),
		"sessions/list":   with(s.sessionsList),
		"sessions/replay": with(s.mgr.Replay),
		"sessions/snapshot": with(func(ctx context.Context, p sessionParams) (session.Snapshot, error) {
			return s.mgr.Snapshot(ctx, p.SessionID)
		}),
		"sessions/compact": with(s.mgr.Compact),
		"sessions/watch":   s.sessionsWatch,
		"daemon/status":    with(s.daemonStatus),
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
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params for %s: %s", method, msg)
	}
	return nil
}

type toolsListParams struct {
	Role   string `json:"role"`
	Format string `json:"format"`
}

func (s *Server) toolsList(_ context.Context, p toolsListParams) (any, error) {
	role, err := tools.ParseRole(p.Role)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params for tools/list: %v", err)
	}
	format, err := tools.ParseFormat(p.Format)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params for tools/list: %v", err)
	}
	return map[string]any{"tools": tools.Render(tools.Defs(role), format)}, nil
}

func (s *Server) toolsCall(ctx context.Context, p session.CallParams) (json.RawMessage, error) {
	if p.Name == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params for tools/call: \"name\" is required (one of %s)", strings.Join(tools.Names(), ", "))
	}
	return s.mgr.Call(ctx, p)
}

func (s *Server) sessionsCreate(ctx context.Context, p session.CreateParams) (any, error) {
	info, err := s.mgr.Create(ctx, p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": info}, nil
}

type sessionParams struct {
	SessionID string `json:"sessionId"`
}

func (s *Server) sessionsGet(ctx context.Context, p sessionParams) (any, error) {
	info, err := s.mgr.Get(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": info}, nil
}

func (s *Server) sessionsList(ctx context.Context, p session.ListParams) (any, error) {
	list, next, err := s.mgr.List(ctx, p)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"sessions": list}
	if next != "" {
		out["nextCursor"] = next
	}
	return out, nil
}

func (s *Server) daemonStatus(ctx context.Context, _ struct{}) (any, error) {
	st, err := s.mgr.Stats(ctx)
	if err != nil {
		return nil, err
	}
	up := s.mgr.Uptime()
	return map[string]any{
		"version":       s.cfg.Version,
		"uptime":        up.Round(1e6).String(),
		"uptimeSeconds": up.Seconds(),
		"database":      s.cfg.Database,
		"socket":        s.cfg.Socket,
		"pid":           s.pid,
		"sessions":      map[string]int{"loaded": st.Loaded, "total": st.Total},
		"callsServed":   st.CallsServed,
		"wal":           st.WAL,
	}, nil
}
