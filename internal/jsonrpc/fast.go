package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// ParamsDecoder reads a method's params from dec, which stands at them,
// into the method's own type, in the same pass as the rest of the line;
// line is the whole line, whose bytes the values dec returns point into.
// Any error sends the line down Parse's path instead, which reports it.
type ParamsDecoder func(dec *jsontext.Decoder, line []byte) (any, error)

// ParseWith is Parse, with a request line of the usual form read in one
// pass: the envelope, and the params through the method's decoder (from
// decoders; a method without one, or with params, goes Parse's way). A line
// that is not of that form — a batch, a member out of the usual order, a
// value of an unusual kind, anything invalid — is parsed by Parse, whose
// answers, errors included, are what they always were.
func ParseWith(line []byte, decoders func(method string) ParamsDecoder) (reqs []Request, errs []Response, batch bool, perr *Error) {
	if r, err := parseFastSafe(line, decoders); err == nil {
		return []Request{r}, nil, false, nil
	}
	return Parse(line)
}

// parseFastSafe is parseFast, a panic in a params decoder (which runs
// outside the server's recovery of a method's handler) sending the line
// down Parse's path like any other failure.
func parseFastSafe(line []byte, decoders func(string) ParamsDecoder) (r Request, err error) {
	defer func() {
		if recover() != nil {
			r, err = Request{}, ErrUnusual
		}
	}()
	return parseFast(line, decoders)
}

// ErrUnusual is what a ParamsDecoder returns for params not of the usual
// form, sending the line down Parse's path, which says what is wrong.
var ErrUnusual = errors.New("not of the usual form")

// parseFast reads {"jsonrpc":"2.0","id":…,"method":…,"params":{…}} in one
// pass. The decoder reads the line in place (a bytes.Buffer is not copied)
// and checks it as it goes: UTF-8, escapes, no name given twice.
func parseFast(line []byte, decoders func(string) ParamsDecoder) (Request, error) {
	var r Request
	dec := jsontext.NewDecoder(bytes.NewBuffer(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return r, ErrUnusual
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return r, err
		}
		switch name.String() {
		case "jsonrpc":
			v, err := ReadString(dec)
			if err != nil || v != "2.0" {
				return r, ErrUnusual
			}
			r.JSONRPC = v
		case "id":
			if k := dec.PeekKind(); k != '"' && k != '0' {
				return r, ErrUnusual
			}
			v, err := dec.ReadValue()
			if err != nil {
				return r, err
			}
			r.ID = json.RawMessage(bytes.Clone(v))
		case "method":
			if r.Method, err = ReadString(dec); err != nil || r.Method == "" {
				return r, ErrUnusual
			}
		case "params":
			if dec.PeekKind() != '{' || r.Method == "" {
				return r, ErrUnusual
			}
			var pd ParamsDecoder
			if decoders != nil {
				pd = decoders(r.Method)
			}
			if pd == nil {
				// Parse's checks (a name given twice in any case, which
				// encoding/json would read as one) are the method's own.
				return r, ErrUnusual
			}
			if r.Value, err = pd(dec, line); err != nil {
				return r, err
			}
		default:
			return r, ErrUnusual
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return r, ErrUnusual
	}
	if _, err := dec.ReadToken(); err != io.EOF || r.JSONRPC == "" || r.Method == "" {
		return r, ErrUnusual
	}
	return r, nil
}

// ReadString reads a string value (ErrUnusual for another kind).
func ReadString(dec *jsontext.Decoder) (string, error) {
	if dec.PeekKind() != '"' {
		return "", ErrUnusual
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	return tok.String(), nil
}
