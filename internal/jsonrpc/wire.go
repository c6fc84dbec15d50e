// Package jsonrpc is the JSON-RPC 2.0 wire format tasksessiond speaks: the
// messages, the error values, and line framing. It knows nothing of the
// methods served.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

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
// read it: its params are read into their type by the method.
type Request struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  string         `json:"method"`
	Params  jsontext.Value `json:"params"`
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
func ErrorResponse(id []byte, err *Error) Response {
	if id == nil {
		id = null
	}
	return Response{JSONRPC: "2.0", ID: id, Error: err}
}

// AppendJSON appends r encoded. A result is written as it is (the daemon
// encodes each result once, compact, with Encode).
func (r Response) AppendJSON(b []byte) ([]byte, error) {
	if r.Encoded != nil {
		if b == nil {
			return r.Encoded, nil
		}
		return append(b, r.Encoded...), nil
	}
	if r.Error != nil || r.Result == nil {
		return Encode(b, r)
	}
	// Sized once: a compaction's result is megabytes.
	b = slices.Grow(b, len(wire.ResponseHead)+len(r.ID)+len(`null,"result":`)+len(r.Result)+1)
	b = AppendResultHead(b, r.ID)
	b = append(b, r.Result...)
	return append(b, '}'), nil
}

// encodeOptions are encoding/json's semantics, which the wire's types are
// declared for, but that <, > and & are left as they are: a host reads a
// result as JSON and a model its text, and "\u003c" costs six bytes for one.
var encodeOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false))

// Encode appends v encoded to b: every response and notification is
// encoded by it.
func Encode(b []byte, v any) ([]byte, error) {
	var err error
	if b == nil { // the encoder's pooled buffer, copied once
		b, err = jsonv2.Marshal(v, encodeOptions)
	} else {
		buf := bytes.NewBuffer(b)
		err = jsonv2.MarshalWrite(buf, v, encodeOptions)
		b = buf.Bytes()
	}
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b, nil
}

// AppendResultHead appends what a successful response to id has before
// its result: {"jsonrpc":"2.0","id":<id, null if none>,"result":. The
// result and a closing brace complete it.
func AppendResultHead(b []byte, id []byte) []byte {
	if id == nil {
		id = null
	}
	b = append(b, wire.ResponseHead...)
	b = append(b, id...)
	return append(b, `,"result":`...)
}
