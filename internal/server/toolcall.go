package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// toolCall is tools/call's params as the parse read them, with the tool's
// arguments decoded into its call.
type toolCall struct {
	wire.ToolCall
	args *tools.Decoded
}

// toolCallMembers are wire.ToolCall's members, matched as encoding/json
// matches a struct's fields.
var toolCallMembers = [...]string{"sessionId", "name", "callId", "role", "arguments"}

// toolCallParams reads tools/call's params in the line's pass, member by
// member: the arguments of a named tool straight into the tool's call
// (tools.ReadCall), and kept as the bytes of the line they came in, for
// the log. Arguments sent before the name, or as a string, are decoded
// once the params are read, from those bytes. Params that are not
// wire.ToolCall's are answered as encoding/json words it.
func toolCallParams(dec *jsontext.Decoder, in []byte) (any, error) {
	start := dec.InputOffset()
	var v toolCall
	if dec.PeekKind() != '{' {
		raw, err := readValue(dec, in)
		if err != nil || raw[0] == 'n' { // null: none
			return v, err
		}
		return nil, toolCallError(raw)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	var (
		seen  [8]string
		names = seen[:0] // as given, to find one given twice in another case
		twice string
		wrong bool // a member wire.ToolCall does not take
	)
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		for _, n := range names {
			if twice == "" && strings.EqualFold(n, name) {
				twice = name
			}
		}
		names = append(names, name)
		m := -1
		for i, f := range toolCallMembers {
			if f == name {
				m = i
				break
			}
		}
		if m < 0 {
			for i, f := range toolCallMembers {
				if strings.EqualFold(f, name) {
					m = i
					break
				}
			}
		}
		switch m {
		case -1:
			wrong = true
		case 4: // arguments
			if v.Name == "" || dec.PeekKind() != '{' || wrong || twice != "" {
				if v.Arguments, err = readValue(dec, in); err != nil {
					return nil, err
				}
				v.args = nil
				continue
			}
			if v.Arguments, v.args, err = toolArguments(dec, in, v.Name); err != nil {
				return nil, err
			}
			continue
		default:
			field := [...]*string{&v.SessionID, &v.Name, &v.CallID, &v.Role}[m]
			switch dec.PeekKind() {
			case '"':
				tok, err := dec.ReadToken()
				if err != nil {
					return nil, err
				}
				*field = tok.String()
				continue
			case 'n': // null leaves it unset
			default:
				wrong = true
			}
		}
		if err := dec.SkipValue(); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	switch {
	case twice != "":
		return nil, givenTwice(twice)
	case wrong:
		return nil, toolCallError(bytes.TrimLeft(in[start:dec.InputOffset()], ": \t\r\n"))
	}
	if v.args == nil && v.Name != "" {
		// Sent before the name, as a string, or not at all.
		call, err := tools.Decode(v.Name, v.Arguments)
		v.args = &tools.Decoded{Call: call, Err: err}
	}
	return v, nil
}

// toolCallError says what is wrong with tools/call's params raw, in
// encoding/json's words.
func toolCallError(raw []byte) error {
	return paramsError(wire.MethodToolsCall, raw, new(wire.ToolCall), errors.New("the params are not tools/call's"))
}

// toolArguments reads an arguments object: its bytes in the line (for the
// log, compacted if sent with spaces) and the call they make.
func toolArguments(dec *jsontext.Decoder, in []byte, tool string) (json.RawMessage, *tools.Decoded, error) {
	start := dec.InputOffset()
	call, argErr, err := tools.ReadCall(tool, dec, in)
	if err != nil {
		return nil, nil, err
	}
	raw := tools.Canonical(bytes.TrimLeft(in[start:dec.InputOffset()], ": \t\r\n"))
	return raw, &tools.Decoded{Call: call, Err: argErr}, nil
}

// readValue reads the next value and returns its bytes in in, which
// outlive the decoder's next read (a value it returns need not).
func readValue(dec *jsontext.Decoder, in []byte) (json.RawMessage, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	end := dec.InputOffset()
	return json.RawMessage(in[end-int64(len(v)) : end]), nil
}
