package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tasksessiond/tasksessiond/wire"
)

// ParamsDecoder reads a method's params — the value dec stands at, whole —
// into the method's own type. in is dec's whole input: the values dec
// returns are slices of it. An *Error is what is wrong with the params
// (answered once the method has been found); any other error is dec's,
// about the line.
type ParamsDecoder func(dec *jsontext.Decoder, in []byte) (any, error)

// Parse reads one line, a single request or a batch, in one pass of
// encoding/json/v2's streaming decoder: the envelope member by member,
// and the params by the method's decoder (from decoders) as they come —
// or, when the method comes after them, once the envelope is read, from
// the bytes the decoder checked. The decoder's own defaults refuse what
// JSON cannot carry faithfully: bytes that are not UTF-8, a lone UTF-16
// surrogate escape, and a name given twice in an object.
//
// Each element that is not a valid request comes back as an error
// response in place; a line that is not JSON is a parse error.
func Parse(line []byte, decoders func(method string) ParamsDecoder) (reqs []Request, errs []Response, batch bool, perr *Error) {
	line = bytes.TrimSpace(line)
	reqs, errs, batch, perr, err := parse(line, decoders)
	if err != nil && errors.Is(err, jsontext.ErrDuplicateName) {
		// A name given twice is answered where it was given: in the
		// envelope or the params (which say so), or inside a member's
		// value, which is the method's to judge (a tool's arguments: the
		// model is told). The line is read again so, with the decoder
		// letting names twice through to those that name them.
		reqs, errs, batch, perr, err = parse(line, decoders, jsontext.AllowDuplicateNames(true))
	}
	if err != nil {
		if msg, ok := TextError(line, err); ok {
			e := Errorf(wire.CodeParseError, "parse error: %s; nothing was done", msg)
			if batch {
				return nil, []Response{ErrorResponse(nil, e)}, true, nil
			}
			return nil, []Response{ErrorResponse(idOf(line), e)}, false, nil
		}
		return nil, nil, batch, notJSON()
	}
	return reqs, errs, batch, perr
}

func parse(line []byte, decoders func(string) ParamsDecoder, opts ...jsontext.Options) (reqs []Request, errs []Response, batch bool, perr *Error, err error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(line), opts...) // reads line in place
	if dec.PeekKind() != '[' {
		r, e, err := readRequest(dec, line, decoders)
		if err == nil {
			err = atEOF(dec)
		}
		switch {
		case err != nil:
			return nil, nil, false, nil, err
		case e != nil:
			return nil, []Response{*e}, false, nil, nil
		}
		return []Request{r}, nil, false, nil, nil
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, true, nil, err
	}
	for dec.PeekKind() != ']' {
		r, e, err := readRequest(dec, line, decoders)
		switch {
		case err != nil:
			return nil, nil, true, nil, err
		case e != nil:
			errs = append(errs, *e)
		default:
			reqs = append(reqs, r)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, true, nil, err
	}
	if err := atEOF(dec); err != nil {
		return nil, nil, true, nil, err
	}
	if len(reqs)+len(errs) == 0 {
		return nil, nil, true, Errorf(wire.CodeInvalidRequest, "invalid request: empty batch"), nil
	}
	return reqs, errs, true, nil, nil
}

// atEOF reports anything after the line's one value.
func atEOF(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != io.EOF {
		return cmpOr(err, errors.New("more than one value"))
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// The envelope's members, matched as encoding/json matches a struct's
// fields: by name, else without regard to case.
var envelope = [...]string{"jsonrpc", "id", "method", "params"}

const (
	memberJSONRPC = iota
	memberID
	memberMethod
	memberParams
)

func member(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// readRequest reads one request, the value dec stands at. e is the error
// response of a value that is not a valid request; err is the decoder's.
func readRequest(dec *jsontext.Decoder, in []byte, decoders func(string) ParamsDecoder) (r Request, e *Response, err error) {
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadValue(); err != nil {
			return r, nil, err
		}
		return r, invalid(nil, Errorf(wire.CodeInvalidRequest, "invalid request: a JSON-RPC request must be an object, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"daemon/status\"}")), nil
	}
	if _, err := dec.ReadToken(); err != nil {
		return r, nil, err
	}
	var (
		seen       [8]string
		names      = seen[:0] // as given, to find one given twice in another case
		twice      string
		typeErr    string
		params     []byte // read, not decoded: the method came after them
		paramsKind jsontext.Kind
	)
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return r, nil, err
		}
		name := tok.String()
		// Go keeps the last of two equal names, without regard to case,
		// so a request naming two methods or ids would be read as one of
		// them, silently.
		for _, n := range names {
			if twice == "" && strings.EqualFold(n, name) {
				twice = name
			}
		}
		names = append(names, name)
		switch m := member(envelope[:], name); m {
		case memberJSONRPC, memberMethod:
			s := &r.JSONRPC
			if m == memberMethod {
				s = &r.Method
			}
			switch dec.PeekKind() {
			case '"':
				tok, err := dec.ReadToken()
				if err != nil {
					return r, nil, err
				}
				*s = tok.String()
			default:
				v, err := dec.ReadValue()
				if err != nil {
					return r, nil, err
				}
				if v.Kind() != 'n' && typeErr == "" { // null leaves it unset, as encoding/json does
					typeErr = fmt.Sprintf("json: cannot unmarshal %s into Go struct field Request.%s of type string", kindName(v.Kind()), envelope[m])
				}
			}
		case memberID:
			v, err := dec.ReadValue()
			if err != nil {
				return r, nil, err
			}
			r.ID = json.RawMessage(bytes.Clone(v))
		case memberParams:
			paramsKind = dec.PeekKind()
			var pd ParamsDecoder
			if paramsKind == '{' || paramsKind == '[' || paramsKind == 'n' {
				pd = decoderOf(decoders, r.Method)
			}
			if pd == nil {
				// The method comes after its params, or has no decoder,
				// or the params are of the wrong kind: they are checked
				// now and decoded once the method is known.
				v, err := dec.ReadValue()
				if err != nil {
					return r, nil, err
				}
				end := dec.InputOffset()
				params, r.Params, r.ParamsErr = in[end-int64(len(v)):end], nil, nil
				continue
			}
			params = nil
			if r.Params, r.ParamsErr, err = decodeParams(pd, dec, in); err != nil {
				return r, nil, err
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return r, nil, err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return r, nil, err
	}
	id := r.ID
	if len(id) > 0 && (id[0] == '{' || id[0] == '[' || id[0] == 't' || id[0] == 'f') {
		id = nil
	}
	switch {
	case typeErr != "":
		return r, invalid(id, Errorf(wire.CodeInvalidRequest, "invalid request: %s", typeErr)), nil
	case twice != "":
		return r, invalid(id, Errorf(wire.CodeInvalidRequest, "invalid request: %q is given twice; give each member once", twice)), nil
	case r.JSONRPC != "2.0":
		return r, invalid(id, Errorf(wire.CodeInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\", got %q", r.JSONRPC)), nil
	case r.Method == "":
		return r, invalid(id, Errorf(wire.CodeInvalidRequest, "invalid request: \"method\" is required")), nil
	case r.ID != nil && id == nil:
		return r, invalid(nil, Errorf(wire.CodeInvalidRequest, "invalid request: \"id\" must be a string or a number")), nil
	case paramsKind != 0 && paramsKind != '{' && paramsKind != '[' && paramsKind != 'n':
		return r, invalid(id, Errorf(wire.CodeInvalidRequest, "invalid request: \"params\" must be an object")), nil
	}
	if pd := decoderOf(decoders, r.Method); params != nil && pd != nil {
		// Read already (checked by the line's decoder), decoded now.
		pdec := jsontext.NewDecoder(bytes.NewBuffer(params), dec.Options())
		if r.Params, r.ParamsErr, err = decodeParams(pd, pdec, params); err != nil {
			return r, nil, err
		}
	}
	return r, nil, nil
}

func decoderOf(decoders func(string) ParamsDecoder, method string) ParamsDecoder {
	if decoders == nil || method == "" {
		return nil
	}
	return decoders(method)
}

// decodeParams runs a method's decoder: an *Error is the params' fault, any
// other error the decoder's.
func decodeParams(pd ParamsDecoder, dec *jsontext.Decoder, in []byte) (any, *Error, error) {
	v, err := pd(dec, in)
	var pe *Error
	switch {
	case err == nil:
		return v, nil, nil
	case errors.As(err, &pe):
		return nil, pe, nil
	}
	return nil, nil, err
}

func invalid(id json.RawMessage, e *Error) *Response {
	r := ErrorResponse(id, e)
	return &r
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "null"
}

func notJSON() *Error {
	return &Error{Code: wire.CodeParseError, Message: "parse error: the line is not valid JSON; send one JSON-RPC 2.0 message per line"}
}

// idOf digs the id out of a request whose text the decoder refused, so its
// error can be matched: encoding/json reads past what the decoder refuses.
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

// TextError says what err, the decoder's error reading text, is when it is
// text that JSON cannot carry faithfully — bytes that are not UTF-8, or a
// \u escape of a lone UTF-16 surrogate, which Go's decoders would quietly
// turn into U+FFFD — in text that is otherwise valid JSON. ok is false for
// any other error.
func TextError(text []byte, err error) (msg string, ok bool) {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || se.ByteOffset < 0 || se.ByteOffset >= int64(len(text)) {
		return "", false
	}
	i := int(se.ByteOffset)
	if r, n := utf8.DecodeRune(text[i:]); r == utf8.RuneError && n == 1 {
		msg = fmt.Sprintf("the message is not valid UTF-8 (byte %#x at offset %d); send text as UTF-8", text[i], i)
	} else if e := text[i:]; len(e) >= 6 && e[0] == '\\' && e[1] == 'u' && utf16.IsSurrogate(hex4(e[2:6])) {
		msg = fmt.Sprintf("the message holds a lone UTF-16 surrogate %s at offset %d, which is no character; escape a character outside the BMP as a surrogate pair", e[:6], i)
	} else {
		return "", false
	}
	// Text that is not JSON besides is answered as not JSON.
	if !jsontext.Value(text).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) {
		return "", false
	}
	return msg, true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}
