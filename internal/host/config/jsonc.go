// Package config edits a user's configuration files without damaging them:
// JSON and JSONC through github.com/tailscale/hujson, which keeps every
// comment, the order of members and the layout; TOML by a delimited block
// of its own; each write beside the original, checked as the host reads
// it, the original kept as a backup, then renamed over it.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// Dialect is how a host reads a file: JSON of one kind, or TOML.
type Dialect int

const (
	// JSON is strict JSON (Codex's serde_json, Claude Code's state file).
	JSON Dialect = iota
	// JSONComments is JSON with comments but no trailing commas (Gemini
	// CLI's strip-json-comments, then JSON.parse).
	JSONComments
	// JSONC is JSON with comments and trailing commas (OpenCode).
	JSONC
	// TOML is TOML as Codex reads it (CheckTOML); setup writes a block of
	// its own in it (SetBlock), not a member.
	TOML
)

func (d Dialect) String() string {
	switch d {
	case JSONComments:
		return "JSON with comments"
	case JSONC:
		return "JSONC"
	case TOML:
		return "TOML"
	}
	return "JSON"
}

var bom = []byte("\xef\xbb\xbf")

// Doc is a JSON or JSONC document being edited. Its bytes outside the
// members an edit touches stay as they were.
type Doc struct {
	dialect Dialect
	bom     bool // the file starts with a byte order mark (kept)
	crlf    bool // the file's lines end in CRLF (new lines do too)
	root    hujson.Value
	held    map[string][]byte // large members' bytes, by placeholder (held.go)
}

// ParseJSON reads b as the dialect's reader would; empty (or only white
// space) is an empty object. A file it cannot read is an error that says
// why, for setup to refuse it untouched.
func ParseJSON(b []byte, d Dialect) (*Doc, error) {
	doc := &Doc{dialect: d}
	if bytes.HasPrefix(b, bom) {
		doc.bom = true
		b = b[len(bom):]
	}
	doc.crlf = allCRLF(b)
	if len(bytes.Trim(b, " \t\r\n")) == 0 {
		doc.root = hujson.Value{Value: &hujson.Object{}, AfterExtra: []byte("\n")}
		return doc, nil
	}
	parse := b
	if d == JSON {
		if skeleton, held, ok := hold(b); ok {
			parse, doc.held = skeleton, held
		}
	}
	v, err := hujson.Parse(append([]byte(nil), parse...))
	if err != nil {
		return nil, fmt.Errorf("not %s: %w", d, err)
	}
	if err := check(v, d); err != nil {
		return nil, err
	}
	if v.Value.Kind() != '{' {
		return nil, errors.New("not a JSON object")
	}
	doc.root = v
	return doc, nil
}

// CheckJSON reports whether the dialect's reader reads b, as ParseJSON
// does; strict JSON by encoding/json alone, which is quick on a large file.
func CheckJSON(b []byte, d Dialect) error {
	if d != JSON {
		_, err := ParseJSON(b, d)
		return err
	}
	b = bytes.TrimPrefix(b, bom)
	t := bytes.TrimSpace(b)
	switch {
	case len(t) == 0:
		return nil
	case !json.Valid(t):
		return errors.New("not strict JSON")
	case t[0] != '{':
		return errors.New("not a JSON object")
	}
	return nil
}

// check refuses what the dialect does not allow: comments in strict JSON,
// trailing commas outside JSONC.
func check(v hujson.Value, d Dialect) error {
	if d == JSONC {
		return nil
	}
	if d == JSON {
		if !v.IsStandard() {
			return errors.New("not strict JSON (it holds comments or trailing commas, which this host does not read)")
		}
		return nil // nor trailing commas, then
	}
	for x := range v.All() {
		switch c := x.Value.(type) {
		case *hujson.Object:
			if n := len(c.Members); n > 0 && c.Members[n-1].Value.AfterExtra != nil {
				return errors.New("a trailing comma, which this host does not read")
			}
		case *hujson.Array:
			if n := len(c.Elements); n > 0 && c.Elements[n-1].AfterExtra != nil {
				return errors.New("a trailing comma, which this host does not read")
			}
		}
	}
	return nil
}

// Bytes is the document as it is now.
func (d *Doc) Bytes() []byte {
	b := d.root.Pack()
	if d.crlf {
		b = crlf(b)
	}
	b = d.unhold(b)
	if d.bom {
		b = append(append([]byte(nil), bom...), b...)
	}
	return b
}

// allCRLF reports whether b's lines all end in CRLF (and it has one).
func allCRLF(b []byte) bool {
	if !bytes.Contains(b, []byte("\r\n")) {
		return false
	}
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		if i == 0 || b[i-1] != '\r' {
			return false
		}
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return true
}

// crlf turns every lone LF into CRLF.
func crlf(b []byte) []byte {
	var out []byte
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}

// IsEmpty reports whether the document is an object without members or
// comments: what is left when setup made the file and uninstall took back
// all it added.
func (d *Doc) IsEmpty() bool {
	obj := d.root.Value.(*hujson.Object)
	return len(obj.Members) == 0 && isSpace(obj.AfterExtra) && isSpace(d.root.BeforeExtra) && isSpace(d.root.AfterExtra)
}

func isSpace(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// Get decodes the value at path into out; false when there is none (or it
// does not decode).
func (d *Doc) Get(path []string, out any) bool {
	if len(path) == 0 {
		d.expandAll()
	}
	v, _ := d.lookup(path)
	if v == nil {
		return false
	}
	c := v.Clone()
	c.Standardize()
	return json.Unmarshal(c.Pack(), out) == nil
}

// Members returns the names of the object at path, in order.
func (d *Doc) Members(path []string) []string {
	v, _ := d.lookup(path)
	if v == nil {
		return nil
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	var names []string
	for _, m := range obj.Members {
		names = append(names, memberName(m))
	}
	return names
}

// lookup finds the value at path, with the indent of the line it is on.
func (d *Doc) lookup(path []string) (*hujson.Value, string) {
	v, indent := &d.root, ""
	for _, name := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil, ""
		}
		i := find(obj, name)
		if i < 0 {
			return nil, ""
		}
		d.expand(obj, i)
		indent = memberIndent(obj, indent)
		v = &obj.Members[i].Value
	}
	return v, indent
}

func memberName(m hujson.ObjectMember) string {
	var s string
	json.Unmarshal(m.Name.Value.(hujson.Literal), &s)
	return s
}

// find returns the index of the last member called name (the one a
// reader keeps), or -1.
func find(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if memberName(obj.Members[i]) == name {
			return i
		}
	}
	return -1
}

// Depth is how many of path's names lead to something in the document:
// len(path) when the value at path is there.
func (d *Doc) Depth(path []string) int {
	for n := len(path); n > 0; n-- {
		if v, _ := d.lookup(path[:n]); v != nil {
			return n
		}
	}
	return 0
}

// Set makes the member at path hold v, making the objects on the way.
// A member that already holds an equal value is left as it is, bytes and
// all. It fails when something on the path is not an object.
func (d *Doc) Set(path []string, v any) error {
	obj, indent, err := d.object(path[:len(path)-1], true)
	if err != nil {
		return err
	}
	name := path[len(path)-1]
	if i := find(obj, name); i >= 0 {
		m := &obj.Members[i]
		if equal(m.Value, v) {
			return nil
		}
		m.Value.Value = d.render(v, memberIndent(obj, indent), multiline(obj, &d.root))
		return nil
	}
	d.addMember(obj, indent, name, v)
	return nil
}

// object returns the object at path (making it, when make, where it is
// missing) and the indent of the line it opens on.
func (d *Doc) object(path []string, make bool) (*hujson.Object, string, error) {
	v, indent := &d.root, ""
	for n, name := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil, "", fmt.Errorf("%s is not an object", strings.Join(path[:n], "."))
		}
		i := find(obj, name)
		if i < 0 {
			if !make {
				return nil, "", nil
			}
			d.addMember(obj, indent, name, map[string]any{})
			i = len(obj.Members) - 1
		}
		d.expand(obj, i)
		indent = memberIndent(obj, indent)
		v = &obj.Members[i].Value
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, "", fmt.Errorf("%s is not an object", strings.Join(path, "."))
	}
	return obj, indent, nil
}

// Append adds v as the last element of the array at path (making it, and
// the objects on the way), unless an equal element is there already.
func (d *Doc) Append(path []string, v any) error {
	parent, indent, err := d.object(path[:len(path)-1], true)
	if err != nil {
		return err
	}
	name := path[len(path)-1]
	i := find(parent, name)
	if i < 0 {
		d.addMember(parent, indent, name, []any{v})
		return nil
	}
	arr, ok := parent.Members[i].Value.Value.(*hujson.Array)
	if !ok {
		return fmt.Errorf("%s is not an array", strings.Join(path, "."))
	}
	for _, e := range arr.Elements {
		if equal(e, v) {
			return nil
		}
	}
	d.addElement(arr, memberIndent(parent, indent), v)
	return nil
}

// Delete removes the member at path, and then each object on the way that
// it left empty (without comments), but for the first keep of path (those
// the user had). It reports whether anything changed.
func (d *Doc) Delete(path []string, keep int) bool {
	obj, _, _ := d.object(path[:len(path)-1], false)
	if obj == nil {
		return false
	}
	i := find(obj, path[len(path)-1])
	if i < 0 {
		return false
	}
	removeAt(&obj.Members, i, &obj.AfterExtra, func(m *hujson.ObjectMember) *hujson.Value { return &m.Name }, func(m *hujson.ObjectMember) *hujson.Value { return &m.Value })
	d.prune(path[:len(path)-1], keep)
	return true
}

// RemoveIf removes the elements of the array at path that match, then the
// array and the objects on the way when it left them empty, but for the
// first keep of path. It returns how many it removed.
func (d *Doc) RemoveIf(path []string, keep int, match func(raw []byte) bool) int {
	v, _ := d.lookup(path)
	if v == nil {
		return 0
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return 0
	}
	n := 0
	for i := len(arr.Elements) - 1; i >= 0; i-- {
		c := arr.Elements[i].Clone()
		c.Standardize()
		if match(bytes.TrimSpace(c.Pack())) {
			removeAt(&arr.Elements, i, &arr.AfterExtra, func(e *hujson.Value) *hujson.Value { return e }, func(e *hujson.Value) *hujson.Value { return e })
			n++
		}
	}
	if n > 0 {
		d.prune(path, keep)
	}
	return n
}

// ReplaceFirst puts v in place of the first element of the array at path
// that matches, where it is (a host may key other settings by an
// element's index), and removes the others that match. It returns how
// many matched.
func (d *Doc) ReplaceFirst(path []string, match func(raw []byte) bool, v any) int {
	av, indent := d.lookup(path)
	if av == nil {
		return 0
	}
	arr, ok := av.Value.(*hujson.Array)
	if !ok {
		return 0
	}
	var at []int
	for i, e := range arr.Elements {
		c := e.Clone()
		c.Standardize()
		if match(bytes.TrimSpace(c.Pack())) {
			at = append(at, i)
		}
	}
	for k := len(at) - 1; k > 0; k-- {
		removeAt(&arr.Elements, at[k], &arr.AfterExtra, func(e *hujson.Value) *hujson.Value { return e }, func(e *hujson.Value) *hujson.Value { return e })
	}
	if len(at) > 0 {
		e := &arr.Elements[at[0]]
		if !equal(*e, v) {
			inner, multi := indent+d.unit(), bytes.ContainsRune(e.BeforeExtra, '\n')
			if s, ok := lastLine(e.BeforeExtra); ok {
				inner = s
			}
			e.Value = d.render(v, inner, multi)
		}
	}
	return len(at)
}

// prune removes the container at path when it is empty, and so on up to
// the first keep of path.
func (d *Doc) prune(path []string, keep int) {
	for ; len(path) > max(keep, 0); path = path[:len(path)-1] {
		v, _ := d.lookup(path)
		if v == nil {
			return
		}
		switch c := v.Value.(type) {
		case *hujson.Object:
			if len(c.Members) > 0 || !isSpace(c.AfterExtra) {
				return
			}
		case *hujson.Array:
			if len(c.Elements) > 0 || !isSpace(c.AfterExtra) {
				return
			}
		default:
			return
		}
		parent, _, _ := d.object(path[:len(path)-1], false)
		i := find(parent, path[len(path)-1])
		removeAt(&parent.Members, i, &parent.AfterExtra, func(m *hujson.ObjectMember) *hujson.Value { return &m.Name }, func(m *hujson.ObjectMember) *hujson.Value { return &m.Value })
	}
}

// equal reports whether x holds the JSON value v.
func equal(x hujson.Value, v any) bool {
	c := x.Clone()
	c.Standardize()
	var a, b any
	if json.Unmarshal(c.Pack(), &a) != nil {
		return false
	}
	raw, err := marshal(v, "", "")
	if err != nil || json.Unmarshal(raw, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func marshal(v any, prefix, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// render is v as a value on a line indented by indent: on several lines
// when the file's objects are, else on one.
func (d *Doc) render(v any, indent string, multi bool) hujson.ValueTrimmed {
	var raw []byte
	var err error
	if multi {
		raw, err = marshal(v, indent, d.unit())
	} else {
		raw, err = marshal(v, "", "")
		raw = spaced(raw)
	}
	if err != nil {
		panic(fmt.Sprintf("config: render %T: %v", v, err)) // setup renders only its own plain values
	}
	x, err := hujson.Parse(raw)
	if err != nil {
		panic(fmt.Sprintf("config: render %T: %v", v, err))
	}
	return x.Value
}

// spaced puts a space after each colon and comma of compact JSON outside
// strings, as a hand-written one-line object has them.
func spaced(b []byte) []byte {
	var out []byte
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		out = append(out, c)
		switch {
		case in && c == '\\':
			i++
			out = append(out, b[i])
		case c == '"':
			in = !in
		case !in && (c == ':' || c == ','):
			out = append(out, ' ')
		}
	}
	return out
}

// unit is the file's indent step: the root's first member's indent, else
// two spaces.
func (d *Doc) unit() string {
	obj := d.root.Value.(*hujson.Object)
	if len(obj.Members) > 0 {
		if s, ok := lastLine(obj.Members[0].Name.BeforeExtra); ok && s != "" {
			return s
		}
	}
	return "  "
}

// lastLine returns the white space after the last newline of extra (false
// when it holds no newline).
func lastLine(extra []byte) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	s := string(extra[i+1:])
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))], true
}

// multiline reports whether obj's members are on lines of their own (an
// empty object follows the root).
func multiline(obj *hujson.Object, root *hujson.Value) bool {
	if len(obj.Members) > 0 {
		return bytes.ContainsRune(obj.Members[0].Name.BeforeExtra, '\n')
	}
	r := root.Value.(*hujson.Object)
	if r != obj {
		return multiline(r, root)
	}
	return true
}

// memberIndent is the indent of obj's members, obj being on a line
// indented by indent.
func memberIndent(obj *hujson.Object, indent string) string {
	for _, m := range obj.Members {
		if s, ok := lastLine(m.Name.BeforeExtra); ok {
			return s
		}
	}
	return indent + "  "
}

func (d *Doc) addMember(obj *hujson.Object, indent, name string, v any) {
	multi := multiline(obj, &d.root)
	inner := indent + d.unit()
	if len(obj.Members) > 0 {
		inner = memberIndent(obj, indent)
	}
	key, _ := marshal(name, "", "")
	m := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.Literal(key)},
		Value: hujson.Value{BeforeExtra: []byte(" "), Value: d.render(v, inner, multi)},
	}
	var last *hujson.Value
	if n := len(obj.Members); n > 0 {
		last = &obj.Members[n-1].Value
	}
	obj.AfterExtra, m.Name.BeforeExtra, m.Value.AfterExtra = insertLast(last, obj.AfterExtra, indent, inner, multi)
	obj.Members = append(obj.Members, m)
}

func (d *Doc) addElement(arr *hujson.Array, indent string, v any) {
	multi := multiline(d.root.Value.(*hujson.Object), &d.root)
	inner := indent + d.unit()
	if len(arr.Elements) > 0 {
		multi = bytes.ContainsRune(arr.Elements[0].BeforeExtra, '\n')
	}
	for _, e := range arr.Elements {
		if s, ok := lastLine(e.BeforeExtra); ok {
			inner = s
			break
		}
	}
	e := hujson.Value{Value: d.render(v, inner, multi)}
	var last *hujson.Value
	if n := len(arr.Elements); n > 0 {
		last = &arr.Elements[n-1]
	}
	arr.AfterExtra, e.BeforeExtra, e.AfterExtra = insertLast(last, arr.AfterExtra, indent, inner, multi)
	arr.Elements = append(arr.Elements, e)
}

// insertLast lays out a value put after last (nil: into an empty
// container) whose closing bracket is preceded by after, on a line
// indented by indent. It returns the container's new after-extra, the new
// value's before-extra and its after-extra (a trailing comma when last had
// one). A comment on the last value's line stays on that line: only the
// new value's text goes in.
func insertLast(last *hujson.Value, after []byte, indent, inner string, multi bool) (newAfter, before, trailing []byte) {
	sep := " "
	if multi {
		sep = "\n" + inner
	}
	if last == nil && isSpace(after) {
		switch {
		case !multi:
			return []byte{}, concat(after), nil
		case bytes.ContainsRune(after, '\n'):
			return after, []byte(sep), nil
		default:
			return []byte("\n" + indent), concat(after, []byte(sep)), nil
		}
	}
	if last != nil && last.AfterExtra != nil {
		trailing = []byte{}
	}
	head, tail := splitLine(after)
	if head == nil {
		return after, []byte(sep), trailing
	}
	if lineComment(head) && !strings.Contains(sep, "\n") {
		sep = "\n" + inner // not on the line a // comment takes to its end
	}
	if multi && !bytes.ContainsRune(tail, '\n') {
		tail = concat([]byte("\n"+indent), tail)
	}
	return tail, concat(head, []byte(sep)), trailing
}

// lineComment reports whether extra (white space and comments, no
// newline outside a comment) ends in a // comment.
func lineComment(extra []byte) bool {
	for i := 0; i < len(extra); {
		switch {
		case bytes.HasPrefix(extra[i:], []byte("//")):
			return true
		case bytes.HasPrefix(extra[i:], []byte("/*")):
			j := bytes.Index(extra[i+2:], []byte("*/"))
			if j < 0 {
				return false
			}
			i += j + 4
		default:
			i++
		}
	}
	return false
}

// splitLine splits extra (white space and comments) at its first newline
// outside a comment: what is on the line before it (nil when that is only
// white space) and the rest.
func splitLine(extra []byte) (head, tail []byte) {
	for i := 0; i < len(extra); {
		switch {
		case extra[i] == '\n':
			if isSpace(extra[:i]) {
				return nil, extra
			}
			if i > 0 && extra[i-1] == '\r' {
				i-- // a CRLF stays whole
			}
			return concat(extra[:i]), concat(extra[i:])
		case bytes.HasPrefix(extra[i:], []byte("//")):
			j := bytes.IndexByte(extra[i:], '\n')
			if j < 0 {
				return concat(extra), []byte("\n")
			}
			i += j
		case bytes.HasPrefix(extra[i:], []byte("/*")):
			j := bytes.Index(extra[i+2:], []byte("*/"))
			if j < 0 {
				return nil, extra
			}
			i += j + 4
		default:
			i++
		}
	}
	if isSpace(extra) {
		return nil, extra
	}
	return concat(extra), nil
}

func concat(parts ...[]byte) []byte {
	out := []byte{}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// removeAt removes element i of s, putting back on the line before it the
// comment insertLast moved off that line, passing a trailing comma on to
// the element before it, and giving an emptied container the white space
// it had.
func removeAt[T any](s *[]T, i int, after *hujson.Extra, before func(*T) *hujson.Value, value func(*T) *hujson.Value) {
	el := &(*s)[i]
	b := before(el).BeforeExtra
	head, _ := splitLine(b)
	if head == nil && !isSpace(b) {
		// a comment on lines of its own before it: keep it
		head = concat(b[:bytes.LastIndexByte(b, '\n')])
	}
	last := i == len(*s)-1
	trailing := value(el).AfterExtra != nil
	*s = append((*s)[:i], (*s)[i+1:]...)
	switch {
	case last && len(*s) > 0:
		prev := value(&(*s)[len(*s)-1])
		switch {
		case !trailing && prev.AfterExtra != nil:
			*after = concat(prev.AfterExtra, *after)
			prev.AfterExtra = nil
		case trailing && prev.AfterExtra == nil:
			prev.AfterExtra = []byte{}
		}
		*after = concat(head, *after)
	case last && head == nil && isSpace(*after):
		// emptied: the white space before the element's first newline
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			b = bytes.TrimSuffix(b[:j], []byte("\r"))
		}
		*after = concat(b)
	case last:
		*after = concat(head, *after)
	case sameLine(b) && sameLine(before(&(*s)[i]).BeforeExtra):
		// on one line: the next takes the removed one's place
		before(&(*s)[i]).BeforeExtra = concat(b)
	default:
		next := before(&(*s)[i])
		next.BeforeExtra = concat(head, next.BeforeExtra)
	}
}

// sameLine reports whether b is white space within a line.
func sameLine(b []byte) bool { return isSpace(b) && !bytes.ContainsAny(b, "\r\n") }
