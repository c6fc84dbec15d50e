// Package jsonrpc is the JSON-RPC 2.0 wire format tasksessiond speaks: the
// messages, the error values, and line framing. It knows nothing of the
// methods served.
package jsonrpc

import (
	"encoding/json"
	"fmt"
	"slices"

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

// Request is a call (with an id) or a notification (without), as Parse
// read it.
type Request struct {
	JSONRPC string
	ID      json.RawMessage
	Method  string
	// Params is the params as the method's ParamsDecoder read them into
	// the method's type (nil: none were sent, or the method is unknown).
	Params any
	// ParamsErr is what is wrong with the params, answered once the
	// method has been found (an unknown method is reported first).
	ParamsErr *Error
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
