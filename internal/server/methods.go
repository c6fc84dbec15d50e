package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

type handler func(ctx context.Context, c *conn, req *jsonrpc.Request) (any, error)

// method is a served method: its handler, and the decoder that reads its
// params in the same pass as the rest of the request line (nil: the
// handler decodes them).
type method struct {
	h      handler
	params jsonrpc.ParamsDecoder
}

// methods are the served JSON-RPC methods, each given its name.
func (s *Server) methods() map[string]method {
	named := map[string]func(method string) method{
		wire.MethodToolsList: with(s.toolsList),
		wire.MethodToolsCall: s.toolsCallMethod,
		wire.MethodSessionsCreate: with(func(ctx context.Context, p wire.CreateSession) (wire.SessionResult, error) {
			info, err := s.mgr.Create(ctx, p)
			return wire.SessionResult{Session: info}, err
		}),
		wire.MethodSessionsResume: with(func(ctx context.Context, p wire.SessionText) (wire.Resumed, error) {
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
		wire.MethodSessionsGet: with(func(ctx context.Context, p wire.SessionRef) (wire.SessionResult, error) {
			info, err := s.mgr.Get(ctx, p.SessionID)
			return wire.SessionResult{Session: info}, err
		}),
		wire.MethodSessionsList:   with(s.sessionsList),
		wire.MethodSessionsReplay: with(s.mgr.Replay),
		wire.MethodSessionsSnapshot: with(func(ctx context.Context, p wire.SessionText) (wire.Snapshot, error) {
			snap, err := s.mgr.Snapshot(ctx, p.SessionID)
			if err == nil && p.MaxChars > 0 && tools.Length(snap.Text) > p.MaxChars {
				snap.Text = compact.TextWithin(snap.Tasks, snap.NextTaskid, p.MaxChars)
			}
			return snap, err
		}),
		wire.MethodSessionsCompact:  with(s.mgr.Compact),
		wire.MethodSessionsWatch:    plain(s.sessionsWatch),
		wire.MethodSessionsWatchAll: plain(s.sessionsWatchAll),
		wire.MethodDaemonStatus:     with(s.daemonStatus),
	}
	out := make(map[string]method, len(named))
	for name, m := range named {
		out[name] = m(name)
	}
	return out
}

// with makes a method of fn: the params are read strictly into P, in the
// parse's pass (strictParams) or else by decode, and passed on.
func with[P, R any](fn func(context.Context, P) (R, error)) func(name string) method {
	return func(name string) method {
		return method{params: strictParams[P], h: func(ctx context.Context, _ *conn, req *jsonrpc.Request) (any, error) {
			p, ok := req.Value.(P)
			if !ok {
				if err := decode(name, req.Params, &p); err != nil {
					return nil, err
				}
			}
			return fn(ctx, p)
		}}
	}
}

// plain makes a method of a handler that decodes its own params.
func plain(h func(name string) handler) func(name string) method {
	return func(name string) method { return method{h: h(name)} }
}

// strictParams reads params into P as decode would accept them: every
// member known (by its exact name: one spelt otherwise is left to decode,
// which matches names as encoding/json does).
func strictParams[P any](dec *jsontext.Decoder, _ []byte) (any, error) {
	var p P
	if err := jsonv2.UnmarshalDecode(dec, &p, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, err
	}
	return p, nil
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

// toolsCallMethod is tools/call: its params, and a tool's arguments when
// the name comes before them, are read in the parse's pass (toolCallParams).
func (s *Server) toolsCallMethod(name string) method {
	return method{params: toolCallParams, h: func(ctx context.Context, _ *conn, req *jsonrpc.Request) (any, error) {
		if v, ok := req.Value.(toolCall); ok {
			return s.toolsCall(ctx, v.ToolCall, v.args)
		}
		var p wire.ToolCall
		if err := decode(name, req.Params, &p); err != nil {
			return nil, err
		}
		return s.toolsCall(ctx, p, nil)
	}}
}

func (s *Server) toolsCall(ctx context.Context, p wire.ToolCall, args *tools.Decoded) (json.RawMessage, error) {
	if p.Name == "" {
		return nil, jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for tools/call: \"name\" is required (one of %s)", strings.Join(tools.Names(), ", "))
	}
	return s.mgr.CallDecoded(ctx, p, args)
}

func (s *Server) sessionsList(ctx context.Context, p wire.ListSessions) (wire.ListSessionsResult, error) {
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
		WAL: st.WAL, Fleet: st.Fleet, Problem: st.Problem}
	out.Sessions.Loaded, out.Sessions.Total = st.Loaded, st.Total
	return out, nil
}
