package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// A TOML file is edited by a block of its own, between two marker lines,
// appended at the end; nothing outside the block is touched. (The TOML
// libraries for Go drop comments when they write.)

// BlockBegin and BlockEnd open and close setup's block; the name in them
// tells one tool's block from another's.
func blockMarkers(name string) (begin, end string) {
	return "# >>> " + name + " >>> (added by \"tasksessiond setup\"; \"--uninstall\" removes it)",
		"# <<< " + name + " <<<"
}

// CheckTOML reports whether b is TOML a host reads.
func CheckTOML(b []byte) error {
	var v map[string]any
	if _, err := toml.Decode(string(bytes.TrimPrefix(b, bom)), &v); err != nil {
		return fmt.Errorf("not TOML: %w", err)
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
	s := string(b)
	begin, end := blockMarkers(name)
	i := strings.Index(s, begin)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], end)
	if j < 0 {
		return ""
	}
	body := s[i+len(begin) : i+j]
	return strings.TrimPrefix(strings.TrimPrefix(body, "\r"), "\n")
}

// SetBlock returns b with the block called name holding body (lines ending
// in "\n", turned to CRLF in a CRLF file): replaced where it is, else
// appended after a blank line. The result must parse (CheckTOML): a block
// that repeats a table the file defines is refused.
func SetBlock(b []byte, name, body string) ([]byte, error) {
	if err := CheckTOML(b); err != nil {
		return nil, err
	}
	nl := "\n"
	if bytes.Contains(b, []byte("\r\n")) {
		nl = "\r\n"
		body = strings.ReplaceAll(body, "\n", "\r\n")
	}
	begin, end := blockMarkers(name)
	block := begin + nl + body + end
	s := string(b)
	var out string
	if i, j, ok := findBlock(s, name); ok {
		out = s[:i] + block + s[j:]
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
// SetBlock put before it.
func RemoveBlock(b []byte, name string) ([]byte, error) {
	s := string(b)
	i, j, ok := findBlock(s, name)
	if !ok {
		return b, nil
	}
	nl := "\n"
	if strings.Contains(s, "\r\n") {
		nl = "\r\n"
	}
	head, tail := s[:i], s[j:]
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
