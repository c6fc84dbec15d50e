package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

type handler func(ctx context.Context, c *conn, req *jsonrpc.Request) (any, error)

// method is a served method: its handler, and the decoder that reads its
// params into their type in the pass over the request line.
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
		wire.MethodSessionsWatch:    withConn(s.watch),
		wire.MethodSessionsWatchAll: withConn(s.watchAll),
		wire.MethodDaemonStatus:     with(s.daemonStatus),
	}
	out := make(map[string]method, len(named))
	for name, m := range named {
		out[name] = m(name)
	}
	return out
}

// with makes a method of fn: its params, read into P by the parse
// (structParams), passed on.
func with[P, R any](fn func(context.Context, P) (R, error)) func(name string) method {
	return withConn(func(ctx context.Context, _ *conn, p P) (any, error) { return fn(ctx, p) })
}

// withConn is with, for a method that needs its connection.
func withConn[P any](fn func(context.Context, *conn, P) (any, error)) func(name string) method {
	return func(name string) method {
		return method{params: structParams[P](name), h: func(ctx context.Context, c *conn, req *jsonrpc.Request) (any, error) {
			p, _ := req.Params.(P) // none sent: the zero P
			return fn(ctx, c, p)
		}}
	}
}

// paramsOptions read params as encoding/json reads them into a struct
// (names matched without regard to case, but for '_' and '-'), strictly:
// a member no field takes is an error, so that a misspelt "session_id" is
// reported instead of ignored; and, as the decoder's defaults have it,
// a name given twice (in any case: two names one field takes), bytes
// that are not UTF-8 and lone surrogate escapes are refused.
var paramsOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false),
	jsonv2.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false))

// structParams reads params into P (strictly, with paramsOptions): the
// value, checked by the line's decoder, then decoded from its bytes.
func structParams[P any](method string) jsonrpc.ParamsDecoder {
	return func(dec *jsontext.Decoder, _ []byte) (any, error) {
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		var p P
		opts := paramsOptions
		if allow, _ := jsonv2.GetOption(dec.Options(), jsontext.AllowDuplicateNames); allow {
			// The line is read again letting names twice through (one
			// was given twice inside a member's value, as metadata may
			// be): the params' own names are still held to once.
			opts = jsonv2.JoinOptions(opts, jsontext.AllowDuplicateNames(true))
			if name, twice := twiceAtTop(raw); twice {
				return nil, givenTwice(name)
			}
		}
		if err := jsonv2.Unmarshal(raw, &p, opts); err != nil {
			return nil, paramsError(method, raw, new(P), err)
		}
		return p, nil
	}
}

// paramsError is the answer to params raw that do not decode into v, a
// pointer to their type: a name given twice (in another case: the line's
// decoder found any other), or what is wrong in encoding/json's words, as
// clients have always read them.
func paramsError(method string, raw []byte, v any, err error) *jsonrpc.Error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && se.Err == jsontext.ErrDuplicateName {
		return givenTwice(se.JSONPointer.LastToken())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if v1err := dec.Decode(v); v1err != nil {
		err = v1err
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for %s: %s", method, msg)
}

func givenTwice(name string) *jsonrpc.Error {
	return jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params: %q is given twice; give each member once", name)
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

// toolsCallMethod is tools/call: its params, and a tool's arguments, are
// read by the parse (toolCallParams).
func (s *Server) toolsCallMethod(string) method {
	return method{params: toolCallParams, h: func(ctx context.Context, _ *conn, req *jsonrpc.Request) (any, error) {
		v, _ := req.Params.(toolCall)
		return s.toolsCall(ctx, v.ToolCall, v.args)
	}}
}

func (s *Server) toolsCall(ctx context.Context, p wire.ToolCall, args *tools.Decoded) (json.RawMessage, error) {
	if p.Name == "" {
		return nil, jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for tools/call: \"name\" is required (one of %s)", strings.Join(tools.Names(), ", "))
	}
	return s.mgr.CallDecoded(ctx, p, args)
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
		WAL: st.WAL, Fleet: st.Fleet, Problem: st.Problem}
	out.Sessions.Loaded, out.Sessions.Total = st.Loaded, st.Total
	return out, nil
}

// twiceAtTop reports a name the object raw gives twice at its top level,
// in any case (as encoding/json would read both into one field). It is
// for the line read again letting names twice through, only.
func twiceAtTop(raw []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	var names []string
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		name := tok.String()
		for _, n := range names {
			if strings.EqualFold(n, name) {
				return name, true
			}
		}
		names = append(names, name)
		if dec.SkipValue() != nil {
			return "", false
		}
	}
	return "", false
}
