package config

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// A TOML file is edited by a block of its own, between two marker lines,
// appended at the end; nothing outside the block is touched. (The TOML
// libraries for Go drop comments when they write.) A host that writes the
// file too may move things about: it may print a new table before the
// comments after the file's last key (the end marker: the table lands in
// the block), or write tables anew, the begin marker before them lost
// (the codex package says where its host does). So the caller
// says which tables are setup's (ours): one in the block that is not is
// kept, moved out after it; one of setup's outside it, and a marker left
// without its pair, are taken out before the block is written.

// blockMarkers open and close setup's block; the name in them
// tells one tool's block from another's.
func blockMarkers(name string) (begin, end string) {
	return "# >>> " + name + " >>> (added by \"tasksessiond setup\"; \"--uninstall\" removes it)",
		"# <<< " + name + " <<<"
}

// CheckTOML reports whether b is TOML a host reads: TOML, by the rules
// of the TOML Rust crate too, which refuses a [table] header under an
// inline table (the Go parser takes it).
func CheckTOML(b []byte) error {
	var v map[string]any
	md, err := toml.Decode(string(bytes.TrimPrefix(b, bom)), &v)
	if err != nil {
		return fmt.Errorf("not TOML: %w", err)
	}
	return extendsInline(string(b), md)
}

// extendsInline is an error when a table header in s names a table
// inside an inline table ("a = { … }", then "[a.b]"). The inline tables
// are the tables md knows that no header defines.
func extendsInline(s string, md toml.MetaData) error {
	var headers []string
	var keys []toml.Key // of headers
	defined := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		if h, ok := tableHeader(line); ok {
			headers, keys = append(headers, h), append(keys, keyParts(h))
			defined[keys[len(keys)-1].String()] = true
		}
	}
	for _, in := range md.Keys() {
		if md.Type(in...) != "Hash" || defined[in.String()] {
			continue
		}
		for i, k := range keys {
			if len(in) < len(k) && slices.Equal(in, k[:len(in)]) {
				return fmt.Errorf("%s is an inline table (%s = { … }), which Codex cannot extend with [%s]: write it as [%s] tables, then run setup again", in, in, headers[i], in)
			}
		}
	}
	return nil
}

// keyParts splits a dotted TOML key into its names, unquoted, as the
// TOML parser reads it; nil when it is not a key.
func keyParts(key string) []string {
	md, err := toml.Decode(key+" = 0", &map[string]any{})
	if keys := md.Keys(); err == nil && len(keys) > 0 {
		return keys[len(keys)-1]
	}
	return nil
}

// DecodeTOML reads b into out.
func DecodeTOML(b []byte, out any) error {
	_, err := toml.Decode(string(bytes.TrimPrefix(b, bom)), out)
	return err
}

// Block returns the text of the block called name in b ("" when there is
// none), without its markers.
func Block(b []byte, name string) string {
	i, j, ok := findBlock(string(b), name)
	if !ok {
		return ""
	}
	begin, end := blockMarkers(name)
	return strings.TrimPrefix(strings.TrimPrefix(string(b[i+len(begin):j-len(end)]), "\r"), "\n")
}

// SetBlock returns b with the block called name holding body (lines ending
// in "\n", turned to CRLF in a CRLF file): replaced where it is, else
// appended after a blank line; tables in it that ours does not claim are
// moved out after it. The result must parse (CheckTOML): a block that
// repeats a table the file defines is refused.
func SetBlock(b []byte, name, body string, ours func(header string) bool) ([]byte, error) {
	if err := CheckTOML(b); err != nil {
		return nil, err
	}
	nl := newline(b)
	begin, end := blockMarkers(name)
	block := begin + nl + strings.ReplaceAll(body, "\n", nl) + end
	before, theirs, after, found := cut(b, name, ours)
	var out string
	switch {
	case !found && before == "":
		out = block + nl
	case !found && strings.HasSuffix(before, "\n"):
		out = before + nl + block + nl
	case !found:
		out = before + nl + nl + block // the file had no final newline: nor does it now
	case theirs == "":
		out = before + block + after
	case strings.HasPrefix(after, nl):
		out = before + block + nl + theirs + after[len(nl):]
	default:
		out = before + block + nl + strings.TrimSuffix(theirs, nl) + after
	}
	if err := CheckTOML([]byte(out)); err != nil {
		return nil, fmt.Errorf("with setup's tables it would not be read (%v): does it define them already?", err)
	}
	return []byte(out), nil
}

// RemoveBlock returns b without the block called name and the blank line
// SetBlock put before it; tables in it that ours does not claim stay.
func RemoveBlock(b []byte, name string, ours func(header string) bool) ([]byte, error) {
	nl := newline(b)
	before, theirs, after, found := cut(b, name, ours)
	switch {
	case !found:
	case theirs != "":
		before, after = before+theirs, strings.TrimPrefix(after, nl)
	case strings.HasPrefix(after, nl):
		after = after[len(nl):]
		if strings.HasSuffix(before, "\n"+nl) { // SetBlock's blank line, after a line ending in either
			before = before[:len(before)-len(nl)]
		}
	default:
		before = strings.TrimSuffix(before, nl+nl) // the file had no final newline
	}
	out := []byte(before + after)
	if bytes.Equal(out, b) {
		return b, nil
	}
	if err := CheckTOML(out); err != nil {
		return nil, err
	}
	return out, nil
}

// newline is the file's line end: CRLF when it has one.
func newline(b []byte) string {
	if bytes.Contains(b, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// RenameTables returns b with each table header named in rename renamed,
// in one pass (a host may key a table by a position that setup's edit
// of another file shifted).
func RenameTables(b []byte, rename map[string]string) []byte {
	if len(rename) == 0 {
		return b
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, line := range lines {
		if h, ok := tableHeader(line); ok && rename[h] != "" {
			lines[i] = strings.Replace(line, h, rename[h], 1)
		}
	}
	return []byte(strings.Join(lines, ""))
}

// findBlock returns where the block called name starts (its begin
// marker's line) and ends (after its end marker, before the newline).
func findBlock(s, name string) (i, j int, ok bool) {
	begin, end := blockMarkers(name)
	i = strings.Index(s, begin)
	if i < 0 {
		return 0, 0, false
	}
	k := strings.Index(s[i:], end)
	if k < 0 {
		return 0, 0, false
	}
	return i, i + k + len(end), true
}

// cut splits b around its block called name: the text before the block
// and after it, without the tables of setup's (ours) there, and the lines
// in the block that are not setup's. Without a block (found false),
// before is the whole file without setup's tables.
func cut(b []byte, name string, ours func(header string) bool) (before, theirs, after string, found bool) {
	s := string(b)
	i, j, found := findBlock(s, name)
	if !found {
		return notOurs(s, name, false, ours), "", "", false
	}
	begin, end := blockMarkers(name)
	return notOurs(s[:i], name, false, ours), notOurs(s[i+len(begin):j-len(end)], name, true, ours), notOurs(s[j:], name, false, ours), true
}

// notOurs returns the lines of s that are not setup's: those of tables
// ours does not claim, and comment lines (setup writes none: they are the
// user's). Inside the block (inBlock) the lines before the first header
// are setup's; outside it they are the user's, and so are the blank lines
// among setup's tables. A marker line of the block is dropped: outside
// the block it lacks its pair.
func notOurs(s, name string, inBlock bool, ours func(header string) bool) string {
	begin, end := blockMarkers(name)
	var out strings.Builder
	own := inBlock
	for _, line := range strings.SplitAfter(s, "\n") {
		if h, ok := tableHeader(line); ok {
			own = ours(h)
		}
		t := strings.TrimSpace(line)
		switch {
		case t == begin || t == end:
		case !own || strings.HasPrefix(t, "#") || t == "" && !inBlock:
			out.WriteString(line)
		}
	}
	return out.String()
}

// tableHeader returns the key of a table's header line ("[a.b]",
// "[[a.b]]"; comments after it allowed), trimmed: up to the first "]" that
// ends a key.
func tableHeader(line string) (string, bool) {
	t, ok := strings.CutPrefix(strings.TrimSpace(line), "[")
	t = strings.TrimPrefix(t, "[")
	for k := 0; ok; k++ {
		n := strings.IndexByte(t[k:], ']')
		if n < 0 {
			break
		}
		if k += n; keyParts(t[:k]) != nil {
			return strings.TrimSpace(t[:k]), true
		}
	}
	return "", false
}
