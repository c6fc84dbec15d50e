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

// methods are the served JSON-RPC methods.
func (s *Server) methods() map[string]handler {
	return map[string]handler{
		"tools/list":        s.toolsList,
		"tools/call":        s.toolsCall,
		"sessions/create":   s.sessionsCreate,
		"sessions/resume":   s.sessionsResume,
		"sessions/get":      s.sessionsGet,
		"sessions/list":     s.sessionsList,
		"sessions/replay":   s.sessionsReplay,
		"sessions/snapshot": s.sessionsSnapshot,
		"sessions/compact":  s.sessionsCompact,
		"sessions/watch":    s.sessionsWatch,
		"daemon/status":     s.daemonStatus,
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

func (s *Server) toolsList(_ context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p struct {
		Role   string `json:"role"`
		Format string `json:"format"`
	}
	if err := decode("tools/list", params, &p); err != nil {
		return nil, err
	}
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

func (s *Server) toolsCall(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p session.CallParams
	if err := decode("tools/call", params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params for tools/call: \"name\" is required (one of %s)", strings.Join(tools.Names(), ", "))
	}
	return s.mgr.Call(ctx, p)
}

func (s *Server) sessionsCreate(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p session.CreateParams
	if err := decode("sessions/create", params, &p); err != nil {
		return nil, err
	}
	info, err := s.mgr.Create(ctx, p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": info}, nil
}

type sessionParams struct {
	SessionID string `json:"sessionId"`
}

func (s *Server) sessionsResume(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode("sessions/resume", params, &p); err != nil {
		return nil, err
	}
	return s.mgr.Resume(ctx, p.SessionID)
}

func (s *Server) sessionsGet(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode("sessions/get", params, &p); err != nil {
		return nil, err
	}
	info, err := s.mgr.Get(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": info}, nil
}

func (s *Server) sessionsList(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p session.ListParams
	if err := decode("sessions/list", params, &p); err != nil {
		return nil, err
	}
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

func (s *Server) sessionsReplay(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p session.ReplayParams
	if err := decode("sessions/replay", params, &p); err != nil {
		return nil, err
	}
	return s.mgr.Replay(ctx, p)
}

func (s *Server) daemonStatus(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	if err := decode("daemon/status", params, &struct{}{}); err != nil {
		return nil, err
	}
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
	}, nil
}

func (s *Server) sessionsSnapshot(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode("sessions/snapshot", params, &p); err != nil {
		return nil, err
	}
	return s.mgr.Snapshot(ctx, p.SessionID)
}

func (s *Server) sessionsCompact(ctx context.Context, _ *conn, params json.RawMessage) (any, error) {
	var p session.CompactParams
	if err := decode("sessions/compact", params, &p); err != nil {
		return nil, err
	}
	return s.mgr.Compact(ctx, p)
}
