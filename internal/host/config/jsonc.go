// Package config edits a user's configuration files without damaging them:
// JSON and JSONC through github.com/tailscale/hujson, which keeps every
// comment, the order of members and the layout; TOML by a delimited block
// of its own; each write beside the original, checked as the host reads
// it, the original kept as a backup, then renamed over it.
package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
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
	return [...]string{"JSON", "JSON with comments", "JSONC", "TOML"}[d]
}

var bom = []byte("\xef\xbb\xbf")

// Doc is a JSON or JSONC document being edited. Its bytes outside the
// members an edit touches stay as they were.
type Doc struct {
	bom  bool // the file starts with a byte order mark (kept)
	crlf bool // the file's lines end in CRLF (new lines do too)
	// open: the file ends in a // comment without a newline, which the
	// hosts' readers take and hujson does not: parsed with one, written
	// without it.
	open bool
	root hujson.Value
	held map[string][]byte // large members' bytes, by placeholder (held.go)
}

// ParseJSON reads b as the dialect's reader would; empty (or only white
// space) is an empty object. A file it cannot read is an error that says
// why, for setup to refuse it untouched.
func ParseJSON(b []byte, d Dialect) (*Doc, error) {
	doc := &Doc{}
	if bytes.HasPrefix(b, bom) {
		doc.bom = true
		b = b[len(bom):]
	}
	n := bytes.Count(b, []byte("\n"))
	doc.crlf = n > 0 && bytes.Count(b, []byte("\r\n")) == n
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
	v, err := hujson.Parse(bytes.Clone(parse))
	if err != nil && d != JSON && !bytes.HasSuffix(parse, []byte("\n")) {
		if w, werr := hujson.Parse(append(bytes.Clone(parse), '\n')); werr == nil {
			v, err, doc.open = w, nil, true
		}
	}
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
	t := bytes.TrimSpace(bytes.TrimPrefix(b, bom))
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
	if d == JSON && !v.IsStandard() {
		return errors.New("not strict JSON (it holds comments or trailing commas, which this host does not read)")
	}
	if d != JSONComments {
		return nil // strict JSON holds no trailing commas either
	}
	for x := range v.All() {
		var last *hujson.Value
		switch c := x.Value.(type) {
		case *hujson.Object:
			if n := len(c.Members); n > 0 {
				last = &c.Members[n-1].Value
			}
		case *hujson.Array:
			if n := len(c.Elements); n > 0 {
				last = &c.Elements[n-1]
			}
		}
		if last != nil && last.AfterExtra != nil {
			return errors.New("a trailing comma, which this host does not read")
		}
	}
	return nil
}

// Bytes is the document as it is now.
func (d *Doc) Bytes() []byte {
	b := d.root.Pack()
	if d.crlf {
		b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	}
	if d.open {
		b = bytes.TrimSuffix(b, []byte("\n"))
		if d.crlf {
			b = bytes.TrimSuffix(b, []byte("\r"))
		}
	}
	b = d.unhold(b)
	if d.bom {
		b = append(bytes.Clone(bom), b...)
	}
	return b
}

// IsEmpty reports whether the document is an object without members or
// comments: what is left when setup made the file and uninstall took back
// all it added.
func (d *Doc) IsEmpty() bool { return bare(d.root) == "{}" }

// Hollow reports whether the value at path is an object or array that
// holds nothing: no member, no element and no comment (a comment is the
// user's, and keeps its container, inside it or beside it).
func (d *Doc) Hollow(path []string) bool {
	v, _, _ := d.at(path, false)
	if v == nil {
		return false
	}
	s := bare(*v) // with the comments before and after it
	return s == "{}" || s == "[]"
}

// Raw is the value at path as it is written, with the white space and
// comments within it (nil when there is none): for SetRaw to put back.
func (d *Doc) Raw(path []string) []byte {
	v, _, _ := d.at(path, false)
	if v == nil {
		return nil
	}
	return hujson.Value{Value: v.Value}.Pack()
}

// SetRaw puts raw, a value as Raw returned it, in place of the value at
// path; the text around the value stays.
func (d *Doc) SetRaw(path []string, raw []byte) error {
	v, _, err := d.at(path, false)
	if v == nil {
		return cmp.Or(err, fmt.Errorf("%s is not there", strings.Join(path, ".")))
	}
	x, err := hujson.Parse(bytes.Clone(raw))
	if err != nil {
		return err
	}
	v.Value = x.Value
	return nil
}

// bare is v's text without white space.
func bare(v hujson.Value) string { return string(bytes.Join(bytes.Fields(v.Pack()), nil)) }

func isSpace(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// Get decodes the value at path into out; false when there is none (or it
// does not decode).
func (d *Doc) Get(path []string, out any) bool {
	if len(path) == 0 {
		d.expandAll()
	}
	v, _, _ := d.at(path, false)
	return v != nil && json.Unmarshal(standard(*v), out) == nil
}

// standard is x as strict JSON, its comments gone.
func standard(x hujson.Value) []byte {
	c := x.Clone()
	c.Standardize()
	return bytes.TrimSpace(c.Pack())
}

// Members returns the names of the object at path, in order.
func (d *Doc) Members(path []string) []string {
	obj, _, _ := d.object(path, false)
	if obj == nil {
		return nil
	}
	var names []string
	for _, m := range obj.Members {
		names = append(names, m.Name.Value.(hujson.Literal).String())
	}
	return names
}

// find returns the index of the last member called name (the one a
// reader keeps), or -1; a held member found is parsed.
func (d *Doc) find(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if obj.Members[i].Name.Value.(hujson.Literal).String() == name {
			d.expand(obj, i)
			return i
		}
	}
	return -1
}

// at returns the value at path and the indent of the line it is on, nil
// when it is not there; with make, the objects missing on the way are
// made. Something on the way that is not an object is an error.
func (d *Doc) at(path []string, make bool) (*hujson.Value, string, error) {
	v, indent := &d.root, ""
	for n, name := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil, "", fmt.Errorf("%s is not an object", strings.Join(path[:n], "."))
		}
		i := d.find(obj, name)
		if i < 0 && !make {
			return nil, "", nil
		}
		if i < 0 {
			d.addMember(obj, indent, name, map[string]any{})
			i = len(obj.Members) - 1
		}
		indent, _ = members(obj).layout(d, indent)
		v = &obj.Members[i].Value
	}
	return v, indent, nil
}

// object is at for an object.
func (d *Doc) object(path []string, make bool) (*hujson.Object, string, error) {
	v, indent, err := d.at(path, make)
	if v == nil {
		return nil, "", err
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, "", fmt.Errorf("%s is not an object", strings.Join(path, "."))
	}
	return obj, indent, nil
}

// Depth is how many of path's names lead to something in the document:
// len(path) when the value at path is there.
func (d *Doc) Depth(path []string) int {
	for n := len(path); n > 0; n-- {
		if v, _, _ := d.at(path[:n], false); v != nil {
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
	i := d.find(obj, path[len(path)-1])
	if i < 0 {
		d.addMember(obj, indent, path[len(path)-1], v)
	} else if m := &obj.Members[i].Value; !equal(*m, v) {
		inner, multi := members(obj).layout(d, indent)
		m.Value = d.render(v, inner, multi)
	}
	return nil
}

// Append adds v as the last element of the array at path (making it, and
// the objects on the way), unless an equal element is there already.
func (d *Doc) Append(path []string, v any) error {
	x, indent, err := d.at(path, false)
	if err != nil {
		return err
	}
	if x == nil {
		return d.Set(path, []any{v})
	}
	arr, ok := x.Value.(*hujson.Array)
	if !ok {
		return fmt.Errorf("%s is not an array", strings.Join(path, "."))
	}
	if !slices.ContainsFunc(arr.Elements, func(e hujson.Value) bool { return equal(e, v) }) {
		l := elements(arr)
		inner, multi := l.layout(d, indent)
		l.add(hujson.Value{Value: d.render(v, inner, multi)}, indent, inner, multi)
	}
	return nil
}

func (d *Doc) addMember(obj *hujson.Object, indent, name string, v any) {
	l := members(obj)
	inner, multi := l.layout(d, indent)
	l.add(hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: []byte(" "), Value: d.render(v, inner, multi)},
	}, indent, inner, multi)
}

// Delete removes the member at path, and then each object on the way that
// it left empty (without comments), but for the first keep of path (those
// the user had). It reports whether anything changed.
func (d *Doc) Delete(path []string, keep int) bool {
	obj, _, _ := d.object(path[:len(path)-1], false)
	if obj == nil {
		return false
	}
	i := d.find(obj, path[len(path)-1])
	if i < 0 {
		return false
	}
	members(obj).remove(i)
	d.prune(path[:len(path)-1], keep)
	return true
}

// RemoveIf removes the elements of the array at path that match, then the
// array and the objects on the way when it left them empty, but for the
// first keep of path. It returns how many it removed.
func (d *Doc) RemoveIf(path []string, keep int, match func(raw []byte) bool) int {
	arr, _, at := d.matching(path, match)
	for _, i := range slices.Backward(at) {
		elements(arr).remove(i)
	}
	if len(at) > 0 {
		d.prune(path, keep)
	}
	return len(at)
}

// ReplaceFirst puts v in place of the first element of the array at path
// that matches, where it is (a host may key other settings by an
// element's index), and removes the others that match. It returns how
// many matched.
func (d *Doc) ReplaceFirst(path []string, match func(raw []byte) bool, v any) int {
	arr, indent, at := d.matching(path, match)
	if len(at) == 0 {
		return 0
	}
	for _, i := range slices.Backward(at[1:]) {
		elements(arr).remove(i)
	}
	if e := &arr.Elements[at[0]]; !equal(*e, v) {
		inner, multi := lastLine(e.BeforeExtra) // laid out as the element it replaces
		if !multi {
			inner = indent + d.unit()
		}
		e.Value = d.render(v, inner, multi)
	}
	return len(at)
}

// matching returns the array at path, the indent of its line, and the
// indexes of its elements that match.
func (d *Doc) matching(path []string, match func(raw []byte) bool) (*hujson.Array, string, []int) {
	v, indent, _ := d.at(path, false)
	if v == nil {
		return nil, "", nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, "", nil
	}
	var at []int
	for i, e := range arr.Elements {
		if match(standard(e)) {
			at = append(at, i)
		}
	}
	return arr, indent, at
}

// prune removes the container at path when it is empty, and so on up to
// the first keep of path.
func (d *Doc) prune(path []string, keep int) {
	for ; len(path) > max(keep, 0); path = path[:len(path)-1] {
		if !d.Hollow(path) {
			return
		}
		parent, _, _ := d.object(path[:len(path)-1], false)
		members(parent).remove(d.find(parent, path[len(path)-1]))
	}
}

// equal reports whether x holds the JSON value v.
func equal(x hujson.Value, v any) bool {
	b, err := json.Marshal(v)
	want, got := jsontext.Value(b), jsontext.Value(standard(x))
	return err == nil && want.Canonicalize() == nil && got.Canonicalize() == nil && bytes.Equal(want, got)
}

// render is v as a value on a line indented by indent: on several lines
// when the file's objects are, else on one with a space after each colon
// and comma, as a hand-written one-line object has them.
func (d *Doc) render(v any, indent string, multi bool) hujson.ValueTrimmed {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	raw := jsontext.Value(bytes.TrimSpace(buf.Bytes()))
	if err == nil && multi {
		err = raw.Indent(jsontext.WithIndentPrefix(indent), jsontext.WithIndent(d.unit()))
	} else if err == nil {
		err = raw.Compact(jsontext.SpaceAfterColon(true), jsontext.SpaceAfterComma(true))
	}
	x, perr := hujson.Parse(raw)
	if err = errors.Join(err, perr); err != nil {
		panic(fmt.Sprintf("config: render %T: %v", v, err)) // setup renders only its own plain values
	}
	return x.Value
}

// unit is the file's indent step: the root's first member's indent, else
// two spaces.
func (d *Doc) unit() string {
	if obj := d.root.Value.(*hujson.Object); len(obj.Members) > 0 {
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

// list is an object's members or an array's elements as their layout
// sees them: the value whose BeforeExtra is the text before each (a
// member's name), the value whose AfterExtra is the text before its comma
// (not nil on the last: a trailing comma), and the text before the
// closing bracket.
type list[T any] struct {
	items  *[]T
	after  *hujson.Extra
	before func(*T) *hujson.Value
	value  func(*T) *hujson.Value
}

func members(obj *hujson.Object) list[hujson.ObjectMember] {
	return list[hujson.ObjectMember]{&obj.Members, &obj.AfterExtra,
		func(m *hujson.ObjectMember) *hujson.Value { return &m.Name },
		func(m *hujson.ObjectMember) *hujson.Value { return &m.Value }}
}

func elements(arr *hujson.Array) list[hujson.Value] {
	self := func(e *hujson.Value) *hujson.Value { return e }
	return list[hujson.Value]{&arr.Elements, &arr.AfterExtra, self, self}
}

// layout returns the indent of the items' lines, the container being on
// a line indented by indent, and whether a new item goes on a line of its
// own: as the first item is, else not when the container holds only a
// comment on one line ({ /* none */ }: remove could not tell a line break
// add put after the comment from one of the user's), else as the root's
// first member is, else yes.
func (l list[T]) layout(d *Doc, indent string) (inner string, multi bool) {
	inner, multi = indent+d.unit(), true
	for i := range *l.items {
		if s, ok := lastLine(l.before(&(*l.items)[i]).BeforeExtra); ok {
			inner = s
			break
		}
	}
	if len(*l.items) > 0 {
		multi = bytes.ContainsRune(l.before(&(*l.items)[0]).BeforeExtra, '\n')
	} else if !isSpace(*l.after) && !bytes.ContainsRune(*l.after, '\n') {
		multi = false
	} else if r := d.root.Value.(*hujson.Object); len(r.Members) > 0 {
		multi = bytes.ContainsRune(r.Members[0].Name.BeforeExtra, '\n')
	}
	return inner, multi
}

// add puts x after the last item, on a line of its own indented by inner
// when multi, else after a space; the container is on a line indented by
// indent. A comment on the last item's line stays on that line, a
// trailing comma stays last.
func (l list[T]) add(x T, indent, inner string, multi bool) {
	sep := " "
	if multi {
		sep = "\n" + inner
	}
	before, after, n := l.before(&x), *l.after, len(*l.items)
	switch head, tail, comment := splitLine(after); {
	case n == 0 && isSpace(after) && !multi:
		*l.after, before.BeforeExtra = []byte{}, slices.Concat(after)
	case n == 0 && isSpace(after) && !bytes.ContainsRune(after, '\n'):
		*l.after, before.BeforeExtra = []byte("\n"+indent), slices.Concat(after, []byte(sep))
	case head == nil:
		before.BeforeExtra = []byte(sep)
	default:
		if comment && !multi {
			sep = "\n" + inner // not on the line a // comment takes to its end
		}
		if tail == nil && !multi {
			// a /* */ comment ends the line: the white space after it
			// stays before the bracket, for remove to give back
			h := bytes.TrimRight(head, " \t")
			head, tail = h, slices.Concat(head[len(h):])
		}
		if multi && !bytes.ContainsRune(tail, '\n') {
			tail = slices.Concat([]byte("\n"+indent), tail)
		}
		*l.after, before.BeforeExtra = tail, slices.Concat(head, []byte(sep))
	}
	if n > 0 && l.value(&(*l.items)[n-1]).AfterExtra != nil {
		l.value(&x).AfterExtra = []byte{}
	}
	*l.items = append(*l.items, x)
}

// remove takes item i out, keeping the comments before it, passing a
// trailing comma on to the item before it, and giving an emptied
// container the white space it had.
func (l list[T]) remove(i int) {
	b := l.before(&(*l.items)[i]).BeforeExtra
	last, trailing := i == len(*l.items)-1, l.value(&(*l.items)[i]).AfterExtra != nil
	*l.items = slices.Delete(*l.items, i, i+1)
	s := *l.items
	if !last {
		next := l.before(&s[i])
		if !bytes.ContainsRune(next.BeforeExtra, '\n') {
			// on the removed one's line: the next takes its place
			next.BeforeExtra = slices.Concat(b, bytes.TrimLeft(next.BeforeExtra, " \t"))
		} else {
			next.BeforeExtra = slices.Concat(comments(b, false), next.BeforeExtra)
		}
		return
	}
	kept := comments(b, !bytes.ContainsRune(*l.after, '\n'))
	if len(s) == 0 && kept == nil && isSpace(*l.after) {
		// emptied: the white space before the item's first newline
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			b = bytes.TrimSuffix(b[:j], []byte("\r"))
		}
		*l.after = slices.Concat(b)
		return
	}
	if len(s) > 0 {
		prev := l.value(&s[len(s)-1])
		switch {
		case !trailing && prev.AfterExtra != nil:
			*l.after = slices.Concat(prev.AfterExtra, *l.after)
			prev.AfterExtra = nil
		case trailing && prev.AfterExtra == nil:
			prev.AfterExtra = []byte{}
		}
	}
	*l.after = slices.Concat(kept, *l.after)
}

// comments is what of extra, the text before an item taken out, stays:
// its comments (nil when it holds none), up to the end of the line before
// the item's, that line end included when end (what follows is on the
// item's line, and a // comment must end).
func comments(extra []byte, end bool) []byte {
	ends, _ := lineEnds(extra)
	switch {
	case len(ends) == 0 && isSpace(extra), len(ends) > 0 && isSpace(extra[:ends[len(ends)-1]]):
		return nil
	case len(ends) == 0:
		return slices.Concat(bytes.TrimRight(extra, " \t")) // without add's space before the item
	case end:
		return slices.Concat(extra[:ends[len(ends)-1]+1])
	}
	return slices.Concat(bytes.TrimSuffix(extra[:ends[len(ends)-1]], []byte("\r")))
}

// splitLine splits extra (white space and comments) at its first line
// end: what is on the line before it (nil when that is only white space),
// the rest, and whether the line ends in a // comment.
func splitLine(extra []byte) (head, tail []byte, comment bool) {
	ends, comment := lineEnds(extra)
	switch {
	case len(ends) == 0 && isSpace(extra), len(ends) > 0 && isSpace(extra[:ends[0]]):
		return nil, extra, false
	case len(ends) == 0:
		return slices.Concat(extra), nil, false
	}
	i := ends[0]
	if extra[i-1] == '\r' {
		i-- // a CRLF stays whole
	}
	return slices.Concat(extra[:i]), slices.Concat(extra[i:]), comment
}

// lineEnds returns the indexes of the newlines in extra that are not
// within a /* comment */, and whether the first line ends in a // comment.
func lineEnds(extra []byte) (ends []int, comment bool) {
	for i := 0; i < len(extra); i++ {
		switch {
		case extra[i] == '\n':
			ends = append(ends, i)
		case bytes.HasPrefix(extra[i:], []byte("//")):
			comment = comment || len(ends) == 0
			j := bytes.IndexByte(extra[i:], '\n')
			if j < 0 {
				return ends, comment
			}
			i += j - 1 // the newline that ends it ends its line
		case bytes.HasPrefix(extra[i:], []byte("/*")):
			j := bytes.Index(extra[i+2:], []byte("*/"))
			if j < 0 {
				return ends, comment
			}
			i += j + 3
		}
	}
	return ends, comment
}
