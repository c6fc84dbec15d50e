package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/tasksessiond/tasksessiond/wire"
)

// Options are how every message is read: names matched without regard to
// case (as encoding/json matches a struct's fields), and, as the decoder's
// defaults have it, bytes that are not UTF-8, lone surrogate escapes and a
// name given twice (in any case) refused. ('_' and '-' count, as they do
// for encoding/json: "session_id" is not "sessionId".)
var Options = json.JoinOptions(json.MatchCaseInsensitiveNames(true), jsonv1.MatchCaseSensitiveDelimiter(true))

// Parse reads one line: a request, or a batch of them. Each element that
// is not a valid request comes back as an error response in its place; a
// line that is not JSON is a parse error.
func Parse(line []byte) (reqs []Request, errs []Response, batch bool, perr *Error) {
	line = bytes.TrimSpace(line)
	if !jsontext.Value(line).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) {
		return nil, nil, len(line) > 0 && line[0] == '[', parseError(nil, nil)
	}
	if line[0] != '[' {
		r, e := readRequest(line)
		if e != nil {
			return nil, []Response{*e}, false, nil
		}
		return []Request{r}, nil, false, nil
	}
	var elems []jsontext.Value // a name twice inside an element is the element's to answer
	if err := json.Unmarshal(line, &elems, jsontext.AllowDuplicateNames(true)); err != nil {
		e := parseError(line, err)
		return nil, []Response{ErrorResponse(nil, e)}, true, nil
	}
	if len(elems) == 0 {
		return nil, nil, true, Errorf(wire.CodeInvalidRequest, "invalid request: empty batch")
	}
	for _, v := range elems {
		if r, e := readRequest(v); e != nil {
			errs = append(errs, *e)
		} else {
			reqs = append(reqs, r)
		}
	}
	return reqs, errs, true, nil
}

// readRequest reads one request, or the error response that answers it.
func readRequest(v []byte) (r Request, e *Response) {
	if jsontext.Value(v).Kind() != '{' {
		if !jsontext.Value(v).IsValid() {
			resp := ErrorResponse(nil, parseError(v, json.Unmarshal(v, new(jsontext.Value))))
			return r, &resp
		}
		return r, invalid(nil, "a JSON-RPC request must be an object, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"daemon/status\"}")
	}
	twice, err := Unmarshal(v, &r)
	id := idOf(v)
	var se *json.SemanticError
	switch {
	case errors.As(err, &se):
		return r, invalid(id, fmt.Sprintf("%q must be a %s, got %s", se.JSONPointer.LastToken(), se.GoType, KindName(se.JSONKind)))
	case err != nil:
		resp := ErrorResponse(id, parseError(v, err))
		return r, &resp
	case twice != "":
		return r, invalid(id, fmt.Sprintf("%q is given twice; give each member once", twice))
	case r.JSONRPC != "2.0":
		return r, invalid(id, fmt.Sprintf("\"jsonrpc\" must be \"2.0\", got %q", r.JSONRPC))
	case r.Method == "":
		return r, invalid(id, "\"method\" is required")
	case r.ID != nil && id == nil:
		return r, invalid(nil, "\"id\" must be a string or a number")
	case r.Params != nil && r.Params.Kind() != '{' && r.Params.Kind() != '[' && r.Params.Kind() != 'n':
		return r, invalid(id, "\"params\" must be an object")
	}
	return r, nil
}

// Unmarshal reads the object v into out, as every message is read
// (Options): a name v itself gives twice, in any case, is returned as
// twice; one given twice deeper is let through, for whoever reads that
// value to answer (a tool's arguments: the model is told).
func Unmarshal(v []byte, out any, opts ...json.Options) (twice string, err error) {
	opts = append([]json.Options{Options}, opts...)
	err = json.Unmarshal(v, out, opts...)
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || se.Err != jsontext.ErrDuplicateName {
		return "", err
	}
	if se.JSONPointer.Parent() == "" {
		return se.JSONPointer.LastToken(), nil
	}
	// Deeper: the names of v's own level are checked here, in any case.
	dec := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true))
	dec.ReadToken()
	var names []string
	for dec.PeekKind() == '"' {
		tok, _ := dec.ReadToken()
		for _, n := range names {
			if strings.EqualFold(n, tok.String()) {
				return tok.String(), nil
			}
		}
		names = append(names, tok.String())
		dec.SkipValue()
	}
	return "", json.Unmarshal(v, out, append(opts, jsontext.AllowDuplicateNames(true))...)
}

// ParamsError words what is wrong with params that did not read into
// their type (err from Unmarshal), or a name they give twice.
func ParamsError(method, twice string, err error) *Error {
	var se *json.SemanticError
	switch {
	case twice != "":
		return Errorf(wire.CodeInvalidParams, "invalid params: %q is given twice; give each member once", twice)
	case err == nil:
		return nil
	case errors.As(err, &se) && errors.Is(se.Err, json.ErrUnknownName):
		return Errorf(wire.CodeInvalidParams, "invalid params for %s: unknown field %q", method, se.JSONPointer.LastToken())
	case errors.As(err, &se) && se.JSONPointer == "":
		return Errorf(wire.CodeInvalidParams, "invalid params for %s: the params must be an object, got %s", method, KindName(se.JSONKind))
	case errors.As(err, &se):
		return Errorf(wire.CodeInvalidParams, "invalid params for %s: %s must be a %s, got %s", method, strings.TrimPrefix(string(se.JSONPointer), "/"), se.GoType, KindName(se.JSONKind))
	}
	return Errorf(wire.CodeInvalidParams, "invalid params for %s: %v", method, err)
}

func invalid(id []byte, msg string) *Response {
	r := ErrorResponse(id, Errorf(wire.CodeInvalidRequest, "invalid request: %s", msg))
	return &r
}

// KindName names a JSON value's kind (jsontext.Value.Kind) for an error
// message: "an object", "a number", "nothing" for no value at all.
func KindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 'n':
		return "null"
	}
	return "nothing"
}

// parseError words a line the decoder refused: text JSON cannot carry, or
// not JSON at all.
func parseError(line []byte, err error) *Error {
	if msg, ok := TextError(line, err); ok {
		return Errorf(wire.CodeParseError, "parse error: %s; nothing was done", msg)
	}
	return Errorf(wire.CodeParseError, "parse error: the line is not valid JSON; send one JSON-RPC 2.0 message per line")
}

// idOf is the id of a request, read past what the strict read refuses (so
// that its error can be matched), or nil when it has none that is a string
// or a number.
func idOf(v []byte) []byte {
	var r struct {
		ID jsontext.Value `json:"id"`
	}
	json.Unmarshal(v, &r, Options, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if k := r.ID.Kind(); k != '"' && k != '0' && k != 'n' {
		return nil
	}
	return r.ID
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
	r, err := strconv.ParseUint(string(b), 16, 16)
	if err != nil {
		return -1
	}
	return rune(r)
}
