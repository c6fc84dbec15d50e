package server

import (
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// toolCall is tools/call's params as the parse's pass read them: with the
// tool's arguments decoded, when the name came before them.
type toolCall struct {
	wire.ToolCall
	args *tools.Decoded
}

// toolCallParams reads tools/call's params. The arguments of a named tool
// are read member by member into the tool's call (tools.DecodeMembers, the
// same checks and messages as tools.Decode), and kept as the bytes of the
// line they came in for the log; sent before the name, or as a string,
// they are kept raw and decoded later, as any other line's.
func toolCallParams(dec *jsontext.Decoder, line []byte) (any, error) {
	var v toolCall
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, jsonrpc.ErrUnusual
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		var field *string
		switch name.String() {
		case "sessionId":
			field = &v.SessionID
		case "name":
			field = &v.Name
		case "callId":
			field = &v.CallID
		case "role":
			field = &v.Role
		case "arguments":
			if v.Name == "" || dec.PeekKind() != '{' {
				raw, err := readValue(dec, line)
				if err != nil {
					return nil, err
				}
				v.Arguments = raw
				continue
			}
			if v.Arguments, v.args, err = toolArguments(dec, line, v.Name); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, jsonrpc.ErrUnusual // decode says what is unknown
		}
		if *field, err = jsonrpc.ReadString(dec); err != nil {
			return nil, err
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, jsonrpc.ErrUnusual
	}
	return v, nil
}

// toolArguments reads an arguments object: its bytes in the line (for the
// log, compacted if sent with spaces) and the call they make.
func toolArguments(dec *jsontext.Decoder, line []byte, tool string) (json.RawMessage, *tools.Decoded, error) {
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, err
	}
	start := dec.InputOffset() - 1 // the '{'
	members := map[string]json.RawMessage{}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, err
		}
		name := tok.String() // a token is void after the next read
		val, err := readValue(dec, line)
		if err != nil {
			return nil, nil, err
		}
		members[name] = val
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, nil, jsonrpc.ErrUnusual
	}
	raw := tools.Canonical(line[start:dec.InputOffset()])
	call, err := tools.DecodeMembers(tool, members)
	return raw, &tools.Decoded{Call: call, Err: err}, nil
}

// readValue reads the next value and returns its bytes in line, which
// outlive the decoder's next read (a value it returns need not).
func readValue(dec *jsontext.Decoder, line []byte) (json.RawMessage, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	end := dec.InputOffset()
	return json.RawMessage(line[end-int64(len(v)) : end]), nil
}
