// Package jsonrpc is the JSON-RPC 2.0 wire format tasksessiond speaks: the
// messages, the error values, and line framing. It knows nothing of the
// methods served.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tasksessiond/tasksessiond/internal/jsontext"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Error is a JSON-RPC error object. Errors compare by code.
type Error struct {
	Code    int64  `json:"code"` // one of package wire's
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code int64, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Request is a call (with an id) or a notification (without).
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	// Value is the params as the method's ParamsDecoder read them in
	// ParseWith's one pass (nil when they were not: Params holds them).
	Value any `json:"-"`
}

// IsNotification reports whether the request expects no response.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Response answers a call: exactly one of Result and Error is set.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	// Encoded, when set, is the whole response already encoded (a long
	// result is encoded straight into its line): the fields above are
	// then not read.
	Encoded []byte `json:"-"`
}

// Notification is a server-to-client message without an id.
type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

var null = json.RawMessage("null")

// ErrorResponse answers id (null when unknown) with err.
func ErrorResponse(id json.RawMessage, err *Error) Response {
	if id == nil {
		id = null
	}
	return Response{JSONRPC: "2.0", ID: id, Error: err}
}

// Parse decodes one line: a single request or a batch. Each element that is
// not a valid request comes back as an error response in place; a line that
// is not JSON is a parse error.
func Parse(line []byte) (reqs []Request, errs []Response, batch bool, perr *Error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			if !json.Valid(line) {
				return nil, nil, true, notJSON()
			}
			return nil, nil, true, Errorf(wire.CodeParseError, "parse error: %v", err)
		}
		if err := checkText(line); err != nil {
			return nil, []Response{ErrorResponse(nil, err)}, true, nil
		}
		if len(elems) == 0 {
			return nil, nil, true, Errorf(wire.CodeInvalidRequest, "invalid request: empty batch")
		}
		for _, e := range elems {
			r, err := parseOne(e)
			if err != nil {
				errs = append(errs, ErrorResponse(idOf(e), err))
				continue
			}
			reqs = append(reqs, r)
		}
		return reqs, errs, true, nil
	}
	// One request is decoded once: json.Unmarshal validates the whole line
	// before it decodes, so a line that is not JSON fails here.
	r, err := parseOne(line)
	if err != nil {
		if !json.Valid(line) {
			return nil, nil, false, notJSON()
		}
		return nil, []Response{ErrorResponse(idOf(line), err)}, false, nil
	}
	if err := checkText(line); err != nil {
		return nil, []Response{ErrorResponse(r.ID, err)}, false, nil
	}
	return []Request{r}, nil, false, nil
}

func notJSON() *Error {
	return &Error{Code: wire.CodeParseError, Message: "parse error: the line is not valid JSON; send one JSON-RPC 2.0 message per line"}
}

// checkText reports what Go's decoder would quietly turn into U+FFFD and
// store as text the sender never wrote (JSON text must be UTF-8, RFC
// 8259). line is valid JSON.
func checkText(line []byte) *Error {
	if err := jsontext.Check(line); err != nil {
		return Errorf(wire.CodeParseError, "parse error: %v; nothing was done", err)
	}
	return nil
}

func parseOne(raw json.RawMessage) (Request, *Error) {
	if len(raw) == 0 || raw[0] != '{' {
		return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: a JSON-RPC request must be an object, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"daemon/status\"}")
	}
	var r Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: %v", err)
	}
	// Go keeps the last of two equal keys, so a request naming two
	// methods, ids or sessions would be read as one of them, silently.
	if k, dup := jsontext.DuplicateFieldKey(raw); dup {
		return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: %q is given twice; give each member once", k)
	}
	if p := bytes.TrimSpace(r.Params); len(p) > 0 && p[0] == '{' {
		if k, dup := jsontext.DuplicateFieldKey(p); dup {
			return Request{}, Errorf(wire.CodeInvalidParams, "invalid params: %q is given twice; give each member once", k)
		}
	}
	if r.JSONRPC != "2.0" {
		return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\", got %q", r.JSONRPC)
	}
	if r.Method == "" {
		return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: \"method\" is required")
	}
	if r.ID != nil {
		switch r.ID[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		case 'n': // "id": null is allowed but discouraged; answer it as given
		default:
			return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: \"id\" must be a string or a number")
		}
	}
	if p := bytes.TrimSpace(r.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' && !bytes.Equal(p, null) {
		return Request{}, Errorf(wire.CodeInvalidRequest, "invalid request: \"params\" must be an object")
	}
	return r, nil
}

// idOf digs the id out of an invalid request, so its error can be matched.
func idOf(raw json.RawMessage) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &v) != nil || v.ID == nil {
		return null
	}
	if c := v.ID[0]; c == '{' || c == '[' || c == 't' || c == 'f' {
		return null
	}
	return v.ID
}

// AppendJSON appends r encoded. A result is written as it is, without the
// second pass json.Marshal makes over a json.RawMessage (it re-validates
// and compacts it, and escapes <, > and & a model would then read): the
// daemon encodes each result once, compact.
func (r Response) AppendJSON(b []byte) ([]byte, error) {
	if r.Encoded != nil {
		if b == nil {
			return r.Encoded, nil
		}
		return append(b, r.Encoded...), nil
	}
	if r.Error != nil || r.Result == nil {
		out, err := json.Marshal(r)
		if err != nil {
			return b, fmt.Errorf("encode response: %w", err)
		}
		return append(b, out...), nil
	}
	// Sized once: a compaction's result is megabytes.
	b = slices.Grow(b, len(wire.ResponseHead)+len(r.ID)+len(`null,"result":`)+len(r.Result)+1)
	b = AppendResultHead(b, r.ID)
	b = append(b, r.Result...)
	return append(b, '}'), nil
}

// AppendResultHead appends what a successful response to id has before
// its result: {"jsonrpc":"2.0","id":<id, null if none>,"result":. The
// result and a closing brace complete it.
func AppendResultHead(b []byte, id json.RawMessage) []byte {
	if id == nil {
		id = null
	}
	b = append(b, wire.ResponseHead...)
	b = append(b, id...)
	return append(b, `,"result":`...)
}
