package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
)

// ErrUnknownTool is returned by Decode for a name that is not a Task tool.
// It is a protocol error, not something the model's arguments can fix.
var ErrUnknownTool = errors.New("unknown tool")

// ArgError is a problem with a call's arguments. It becomes a tool result
// with isError set, worded so that the model can correct its call.
type ArgError struct {
	Tool string
	Msg  string
}

func (e *ArgError) Error() string { return e.Tool + ": " + e.Msg }

// Canonical returns the arguments as they are logged: a compact JSON object.
// Hosts in the OpenAI style pass the arguments as a string holding the
// object; that string is unwrapped when it holds valid JSON. Absent or null
// arguments are the empty object. Anything else is kept as it came, so that
// the log shows what the model actually sent.
func Canonical(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}")
	}
	v := jsontext.Value(raw)
	if raw[0] == '"' {
		var s string
		if jsonv2.Unmarshal(raw, &s) == nil {
			// The outer line was checked as text; the JSON inside the
			// string was not: a lone surrogate escape there would
			// become U+FFFD. (A name given twice is kept, to be logged
			// as it came with the error that names it.)
			switch inner := bytes.TrimSpace([]byte(s)); {
			case len(inner) == 0:
				return json.RawMessage("{}")
			case jsontext.Value(inner).IsValid(jsontext.AllowDuplicateNames(true)):
				v = inner
			}
		}
	}
	if bytes.IndexAny(v, " \t\r\n") < 0 {
		return json.RawMessage(v) // compact already, as most hosts send it
	}
	v = bytes.Clone(v)
	if v.Compact(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) != nil {
		return raw
	}
	return json.RawMessage(v)
}

// Rules are what a call's arguments are held to.
type Rules struct {
	maxDescription int
	lenientText    bool // bytes that are not UTF-8 and lone surrogate escapes read as U+FFFD
}

var (
	// Live are the rules of a call as a host sends it.
	Live = Rules{maxDescription: MaxDescriptionRunes}
	// Logged are the rules of a call already in a log (replay): a
	// description held to the highest limit any version had, and text
	// read as the first version read it, so that a call accepted then is
	// applied now, and no later taskid shifts.
	Logged = Rules{maxDescription: MaxLoggedDescriptionRunes, lenientText: true}
)

// Decode reads a call of the named tool, live or from a log alike: the
// call it makes, and its arguments as they are logged (Canonical). raw is
// an object, a string holding one (as OpenAI-style hosts send it), or
// absent. The error is ErrUnknownTool or an *ArgError.
func Decode(name string, raw json.RawMessage, rules Rules) (call Call, logged json.RawMessage, err error) {
	logged = Canonical(raw)
	def, ok := Lookup(name)
	if !ok {
		return Call{}, logged, fmt.Errorf("%w %q: the tools are %s", ErrUnknownTool, name, strings.Join(Names(), ", "))
	}
	fail := func(format string, a ...any) (Call, json.RawMessage, error) {
		return Call{}, logged, &ArgError{Tool: name, Msg: fmt.Sprintf(format, a...)}
	}
	args := map[string]json.RawMessage{}
	var twice string
	if !bytes.Equal(logged, []byte("null")) { // a string holding null: no arguments
		twice, err = jsonrpc.Unmarshal(logged, &args, jsontext.AllowInvalidUTF8(rules.lenientText))
	}
	switch {
	case twice != "":
		// Readers disagree on which of two values counts (Go takes the
		// last, SQLite's json_extract the first): neither is guessed.
		return fail("argument %q is given twice; give each argument once", twice)
	case err == nil && logged[0] != '"':
		call, err = decodeMembers(def, args, rules.maxDescription)
		return call, logged, err
	case logged[0] == '"':
		// A string Canonical could not unwrap: it holds no JSON, or text
		// JSON cannot carry.
		var s string
		if err := jsonv2.Unmarshal(logged, &s); err != nil {
			return fail("arguments are not valid JSON: %s", jsonrpc.SyntaxError(err))
		}
		if err := jsonv2.Unmarshal([]byte(s), new(jsontext.Value)); err != nil {
			return fail("arguments must be a JSON object; the string given does not hold valid JSON: %s", jsonrpc.SyntaxError(err))
		}
		return fail("arguments must be a JSON object, got a string holding %s", jsonKind([]byte(s)))
	case errors.As(err, new(*jsontext.SyntacticError)):
		return fail("arguments are not valid JSON: %s", jsonrpc.SyntaxError(err))
	}
	return fail("arguments must be a JSON object, got %s", jsonKind(logged))
}

func decodeMembers(def Def, args map[string]json.RawMessage, maxDesc int) (Call, error) {
	name := def.Name
	fail := func(format string, a ...any) (Call, error) {
		return Call{}, &ArgError{Tool: name, Msg: fmt.Sprintf(format, a...)}
	}
	if unknown := unknownKeys(args, def.params); len(unknown) > 0 {
		return fail("%s", unknownMessage(def, unknown))
	}

	// Optional fields sent as null (OpenAI strict mode does this) mean absent.
	for k, v := range args {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(args, k)
		}
	}

	c := Call{Name: name}
	var err error
	switch name {
	case TaskCreate:
		rawSubject, ok := args["subject"]
		if !ok {
			return fail("subject is required: give a short one-line title, e.g. {\"subject\": \"Write the parser tests\"}")
		}
		if c.Subject, err = decodeSubject(rawSubject); err != nil {
			return fail("%v", err)
		}
		if c.Description, err = decodeDescription(args["description"], maxDesc); err != nil {
			return fail("%v", err)
		}
		if c.Description == nil {
			empty := ""
			c.Description = &empty
		}
	case TaskGet:
		if c.Taskid, err = decodeTaskid(args["taskid"]); err != nil {
			return fail("%v", err)
		}
	case TaskUpdate:
		if c.Taskid, err = decodeTaskid(args["taskid"]); err != nil {
			return fail("%v", err)
		}
		if v, ok := args["status"]; ok {
			var s string
			if jsonString(v, &s) != nil {
				return fail("status must be a string: one of pending, inprogress, completed, deleted; got %s", jsonKind(v))
			}
			st, err := tasksessiond.ParseStatus(s)
			if err != nil {
				return fail("%v", err)
			}
			c.Status = st
		}
		if v, ok := args["subject"]; ok {
			if c.Subject, err = decodeSubject(v); err != nil {
				return fail("%v", err)
			}
		}
		if c.Description, err = decodeDescription(args["description"], maxDesc); err != nil {
			return fail("%v", err)
		}
		if c.Change.Empty() {
			return fail("nothing to change: give at least one of status, subject or description together with taskid, e.g. {\"taskid\": %d, \"status\": \"completed\"}", c.Taskid)
		}
	}
	return c, nil
}

// jsonString decodes a JSON string, without the decoder for the common
// case of one with no escapes.
func jsonString(v json.RawMessage, s *string) error {
	if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' && bytes.IndexByte(v[1:n-1], '\\') < 0 && bytes.IndexByte(v[1:n-1], '"') < 0 && utf8.Valid(v[1:n-1]) {
		*s = string(v[1 : n-1])
		return nil
	}
	return jsonv2.Unmarshal(v, s, jsontext.AllowInvalidUTF8(true))
}

func decodeSubject(v json.RawMessage) (*string, error) {
	var s string
	if err := jsonString(v, &s); err != nil {
		return nil, fmt.Errorf("subject must be a string, got %s", jsonKind(v))
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return nil, errors.New("subject must not be empty: give a short one-line title")
	case strings.ContainsAny(s, "\r\n"):
		return nil, errors.New("subject must be one line: put the details in description")
	case utf8.RuneCountInString(s) > MaxSubjectRunes:
		return nil, fmt.Errorf("subject is %d characters, the limit is %d: shorten it and put the details in description", utf8.RuneCountInString(s), MaxSubjectRunes)
	case strings.ContainsFunc(s, unicode.IsControl):
		return nil, errors.New("subject must not contain control characters")
	}
	return &s, nil
}

func decodeDescription(v json.RawMessage, max int) (*string, error) {
	if v == nil {
		return nil, nil
	}
	var s string
	if err := jsonString(v, &s); err != nil {
		return nil, fmt.Errorf("description must be a string, got %s", jsonKind(v))
	}
	switch {
	case len(s) > max && utf8.RuneCountInString(s) > max:
		return nil, fmt.Errorf("description is %d characters, the limit is %d: keep it to the essentials (long material belongs in a file the description names)", utf8.RuneCountInString(s), max)
	case strings.ContainsRune(s, 0):
		return nil, errors.New("description must not contain NUL characters")
	}
	return &s, nil
}

// decodeTaskid takes a JSON integer, or a string of digits optionally
// prefixed with '#', as models often write "#3".
func decodeTaskid(v json.RawMessage) (int, error) {
	const hint = "taskid must be a positive integer such as 3 (the taskid that TaskCreate returned)"
	if v == nil {
		return 0, errors.New("taskid is required: " + hint)
	}
	var text string
	switch v[0] {
	case '"':
		if err := jsonString(v, &text); err != nil {
			return 0, errors.New(hint)
		}
		text = strings.TrimPrefix(strings.TrimSpace(text), "#")
		if text == "" || strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return 0, fmt.Errorf("%s, got %s", hint, v)
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		text = string(v)
	default:
		return 0, fmt.Errorf("%s, got %s", hint, jsonKind(v))
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		// 3.0 and 3e0 are integers too; 3.5 is not.
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("%s, got %s", hint, v)
		}
		n = int64(f)
	}
	if n < 1 {
		return 0, fmt.Errorf("%s, got %s", hint, v)
	}
	if n > 1<<53 {
		return 0, fmt.Errorf("taskid %s is out of range: %s", text, hint)
	}
	return int(n), nil
}

// hostArgs are arguments a host adds to every tool's schema for itself,
// which reach the tool with the call: Gemini CLI's wait_for_previous (run
// this call after the ones before it in the turn). They are ignored.
var hostArgs = []string{"wait_for_previous"}

func unknownKeys(args map[string]json.RawMessage, params []string) []string {
	var unknown []string
	for k := range args {
		if !slices.Contains(params, k) && !slices.Contains(hostArgs, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return unknown
}

func unknownMessage(def Def, unknown []string) string {
	quoted := make([]string, len(unknown))
	for i, k := range unknown {
		quoted[i] = strconv.Quote(k)
	}
	noun := "argument"
	if len(unknown) > 1 {
		noun = "arguments"
	}
	msg := fmt.Sprintf("unknown %s %s", noun, strings.Join(quoted, ", "))
	if def.Name == TaskUpdate && slices.ContainsFunc(unknown, isIDAlias) {
		msg += " (the taskid identifies the task and cannot be changed)"
	}
	if len(def.params) == 0 {
		return msg + "; " + def.Name + " takes no arguments: call it with {}"
	}
	return msg + "; " + def.Name + " takes: " + strings.Join(def.params, ", ")
}

func isIDAlias(k string) bool {
	switch strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k)) {
	case "id", "newtaskid", "newid", "task", "taskid":
		return true
	}
	return false
}

func jsonKind(v json.RawMessage) string { return jsonrpc.KindName(jsontext.Value(v).Kind()) }
