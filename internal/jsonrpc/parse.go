package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

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

// Parse reads one line: a request, or a batch of at most maxBatch of them
// (0: any number). Each element that is not a valid request comes back as
// an error response in its place; a line that is not JSON is a parse
// error.
func Parse(line []byte, maxBatch int) (reqs []Request, errs []Response, batch bool, perr *Error) {
	line = bytes.TrimSpace(line)
	// Text JSON cannot carry, and a name twice, are each request's to answer.
	lenient := json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if !jsontext.Value(line).IsValid(lenient) {
		return nil, nil, len(line) > 0 && line[0] == '[', parseError(json.Unmarshal(line, new(jsontext.Value), lenient))
	}
	if line[0] != '[' {
		r, e := readRequest(line)
		if e != nil {
			return nil, []Response{*e}, false, nil
		}
		return []Request{r}, nil, false, nil
	}
	// Counted before any is read: a line of a million scalars would
	// otherwise cost a response each before it was refused.
	if n := batchLen(line, lenient); maxBatch > 0 && n > maxBatch {
		return nil, nil, true, Errorf(wire.CodeInvalidRequest, "invalid request: a batch holds at most %d requests and this one holds %d; nothing was done: send them in smaller batches", maxBatch, n)
	}
	var elems []jsontext.Value
	if err := json.Unmarshal(line, &elems, lenient); err != nil {
		e := parseError(err)
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

// batchLen counts the elements of the valid array line.
func batchLen(line []byte, opts json.Options) int {
	dec := jsontext.NewDecoder(bytes.NewReader(line), opts)
	dec.ReadToken()
	n := 0
	for dec.PeekKind() != ']' && dec.SkipValue() == nil {
		n++
	}
	return n
}

// readRequest reads one request, or the error response that answers it.
func readRequest(v []byte) (r Request, e *Response) {
	if jsontext.Value(v).Kind() != '{' {
		if !jsontext.Value(v).IsValid() {
			resp := ErrorResponse(nil, parseError(json.Unmarshal(v, new(jsontext.Value))))
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
		resp := ErrorResponse(id, parseError(err))
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
	// Deeper: the names of v's own level are checked here, in any case,
	// read as the caller reads them; what else is wrong is the decoder's.
	opts = append(opts, jsontext.AllowDuplicateNames(true))
	dec := jsontext.NewDecoder(bytes.NewReader(v), opts...)
	if _, err := dec.ReadToken(); err != nil {
		return "", err
	}
	var names []string
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", err
		}
		for _, n := range names {
			if strings.EqualFold(n, tok.String()) {
				return tok.String(), nil
			}
		}
		names = append(names, tok.String())
		if err := dec.SkipValue(); err != nil {
			return "", err
		}
	}
	return "", json.Unmarshal(v, out, opts...)
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

// parseError words a line the decoder refused (err): not JSON, or text
// JSON cannot carry (bytes that are not UTF-8, a \u escape of a lone
// UTF-16 surrogate), which Go's decoders would quietly make U+FFFD.
func parseError(err error) *Error {
	return Errorf(wire.CodeParseError, "parse error: the line is not valid JSON: %s; send one JSON-RPC 2.0 message per line; nothing was done", SyntaxError(err))
}

// SyntaxError words the decoder's refusal of text for a person: what it
// met, and where.
func SyntaxError(err error) string {
	if err == nil {
		return "invalid JSON" // a caller's mistake; never a nil dereference
	}
	return strings.TrimPrefix(err.Error(), "jsontext: ")
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
