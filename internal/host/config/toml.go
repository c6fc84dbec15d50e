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
// inside an inline table ("a = { … }", then "[a.b]").
func extendsInline(s string, md toml.MetaData) error {
	var inline [][]string
	var table []string
	for _, line := range strings.Split(s, "\n") {
		if h, ok := tableHeader(line); ok {
			table = keyParts(h)
			for _, in := range inline {
				if len(in) <= len(table) && slices.Equal(in, table[:len(in)]) {
					return fmt.Errorf("%s is an inline table (%s = { … }), which Codex cannot extend with [%s]: write it as [%s] tables, then run setup again",
						strings.Join(in, "."), strings.Join(in, "."), h, strings.Join(in, "."))
				}
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(strings.TrimSpace(value), "{") {
			continue
		}
		if parts := keyParts(key); parts != nil {
			path := append(slices.Clone(table), parts...)
			if md.Type(path...) == "Hash" { // not a line of a multi-line string
				inline = append(inline, path)
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
	b = dropStrays(b, name, ours)
	s, nl := string(b), newline(b)
	begin, end := blockMarkers(name)
	block := begin + nl + strings.ReplaceAll(body, "\n", nl) + end
	var out string
	if i, j, ok := findBlock(s, name); ok {
		switch theirs := foreign(Block(b, name), ours); {
		case theirs == "":
			out = s[:i] + block + s[j:]
		case strings.HasPrefix(s[j:], nl):
			out = s[:i] + block + nl + theirs + s[j+len(nl):]
		default:
			out = s[:i] + block + nl + strings.TrimSuffix(theirs, nl) + s[j:]
		}
	} else {
		switch {
		case s == "":
			out = block + nl
		case strings.HasSuffix(s, "\n"):
			out = s + nl + block + nl
		default:
			out = s + nl + nl + block // the file had no final newline: nor does it now
		}
	}
	if err := CheckTOML([]byte(out)); err != nil {
		return nil, fmt.Errorf("with setup's tables it would not be read (%v): does it define them already?", err)
	}
	return []byte(out), nil
}

// RemoveBlock returns b without the block called name and the blank line
// SetBlock put before it; tables in it that ours does not claim stay.
func RemoveBlock(b []byte, name string, ours func(header string) bool) ([]byte, error) {
	if stray := dropStrays(b, name, ours); !bytes.Equal(stray, b) {
		if err := CheckTOML(stray); err != nil {
			return nil, err
		}
		b = stray
	}
	s, nl := string(b), newline(b)
	i, j, ok := findBlock(s, name)
	if !ok {
		return b, nil
	}
	head, tail := s[:i], s[j:]
	if theirs := foreign(Block(b, name), ours); theirs != "" {
		out := []byte(head + theirs + strings.TrimPrefix(tail, nl))
		return out, CheckTOML(out)
	}
	if strings.HasPrefix(tail, nl) {
		tail = tail[len(nl):]
		if strings.HasSuffix(head, nl+nl) {
			head = head[:len(head)-len(nl)]
		}
	} else {
		head = strings.TrimSuffix(head, nl+nl) // the file had no final newline
	}
	out := []byte(head + tail)
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

// dropStrays returns b without the tables of setup's (ours) outside its
// block called name, and without a marker line of the block's that lacks
// its pair. Comments and blank lines in a dropped table stay (setup
// writes none).
func dropStrays(b []byte, name string, ours func(header string) bool) []byte {
	s := string(b)
	begin, end := blockMarkers(name)
	i, j, whole := findBlock(s, name)
	var out strings.Builder
	drop := false
	pos := 0
	for _, line := range strings.SplitAfter(s, "\n") {
		at := pos
		pos += len(line)
		if whole && at >= i && at < j {
			out.WriteString(line)
			drop = false // a table of setup's before the block ends at it
			continue
		}
		t := strings.TrimSpace(line)
		if t == begin || t == end {
			continue // its pair is gone
		}
		if h, ok := tableHeader(line); ok {
			drop = ours(h)
		}
		if drop && t != "" && !strings.HasPrefix(t, "#") {
			continue
		}
		out.WriteString(line)
	}
	if out.Len() == len(s) {
		return b
	}
	return []byte(out.String())
}

// foreign returns the tables in a block's text that ours does not claim
// (each from its header line to the next), their lines as they are, and
// the comment lines among setup's (which writes none: they are the user's).
func foreign(body string, ours func(header string) bool) string {
	var theirs strings.Builder
	own := true
	for _, line := range strings.SplitAfter(body, "\n") {
		if h, ok := tableHeader(line); ok {
			own = ours(h)
		}
		if !own || strings.HasPrefix(strings.TrimSpace(line), "#") {
			theirs.WriteString(line)
		}
	}
	return theirs.String()
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
