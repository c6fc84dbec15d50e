package config_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tailscale/hujson"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

func FuzzEdit(f *testing.F) {
	// Ensures setup's edit of any JSONC a host reads gives a file the host
	// reads, keeps every byte of the original (in order), changes nothing
	// when made again, and is taken back by uninstall's.
	for _, s := range []string{
		"", "{}", "{ }", "{\n}\n", `{"a":1}`, "{\n  \"tools\": {\n    \"bash\": true // keep the shell\n  }\n}\n",
		"\ufeff{\r\n  \"a\": [1, /* x */ 2,],\r\n}\r\n", "// c\n{\"hooks\": {\"SessionStart\": [{\"hooks\": []}]}, /* end */}",
		"{\"permissions\": {\"allow\": [\"Bash\"], \"deny\": []}}", "{\"tools\": {/* a\n b */}}",
	} {
		f.Add([]byte(s), byte(config.JSONC))
	}
	f.Fuzz(func(t *testing.T, in []byte, dialect byte) {
		d := config.Dialect(dialect % 3)
		doc, err := config.ParseJSON(in, d)
		if err != nil {
			return
		}
		var before map[string]any
		doc.Get(nil, &before)
		if err := tryEdit(doc); err != nil {
			return // something on the way is not an object: setup refuses such a file
		}
		out := doc.Bytes()
		again, err := config.ParseJSON(out, d)
		if err != nil {
			t.Fatalf("the edit gave a file the host does not read: %v\n%q\n->\n%q", err, in, out)
		}
		if !holdsEdit(again) {
			t.Fatalf("the edit is not in what a reader gets (in a comment?):\n%q\n->\n%q", in, out)
		}
		blank := len(bytes.Trim(in, " \t\r\n")) == 0
		if !blank && !touched(before) && !subsequence(in, out) {
			t.Fatalf("a byte of the original is gone:\n%q\n->\n%q", in, out)
		}
		if err := tryEdit(again); err != nil || !bytes.Equal(again.Bytes(), out) {
			t.Fatalf("a second edit changed the file (%v):\n%q\n->\n%q", err, out, again.Bytes())
		}
		undo(again)
		if _, err := config.ParseJSON(again.Bytes(), d); err != nil {
			t.Fatalf("the undo gave a file the host does not read: %v\n%q", err, again.Bytes())
		}
		if touched(before) {
			return
		}
		var after map[string]any
		again.Get(nil, &after)
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("the undo did not give the original values back:\n%q\n->\n%q", in, again.Bytes())
		}
		if !blank && !bytes.Equal(again.Bytes(), in) {
			if v, err := hujson.Parse(bytes.TrimPrefix(in, []byte("\ufeff"))); err == nil && !hasEmpty(&v) {
				t.Fatalf("the undo did not give the original bytes back:\n%q\n->\n%q", in, again.Bytes())
			}
		}
	})
}

// holdsEdit reports whether a reader of d gets what tryEdit set.
func holdsEdit(d *config.Doc) bool {
	var todo *bool
	var allow []any
	var start []any
	d.Get([]string{"tools", "todowrite"}, &todo)
	d.Get([]string{"permissions", "allow"}, &allow)
	d.Get([]string{"hooks", "SessionStart"}, &start)
	b, _ := json.Marshal(start)
	return todo != nil && !*todo && bytes.Contains(b, []byte("tasksessiond hook x")) && containsString(allow, "mcp__tasks")
}

func containsString(xs []any, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func tryEdit(d *config.Doc) error {
	if err := d.Set([]string{"tools", "todowrite"}, false); err != nil {
		return err
	}
	if err := d.Append([]string{"hooks", "SessionStart"}, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "tasksessiond hook x"}}}); err != nil {
		return err
	}
	return d.Append([]string{"permissions", "allow"}, "mcp__tasks")
}

// touched reports whether the original already holds something the edit
// sets or uninstall removes (or an empty container on the way, which
// uninstall prunes): then only the values outside those are compared.
func touched(v map[string]any) bool {
	for _, k := range []string{"tools", "hooks", "permissions"} {
		if x, ok := v[k]; ok && isEmpty(x) {
			return true
		}
	}
	tools, _ := v["tools"].(map[string]any)
	if _, ok := tools["todowrite"]; ok {
		return true
	}
	hooks, _ := v["hooks"].(map[string]any)
	perms, _ := v["permissions"].(map[string]any)
	for _, x := range []any{hooks["SessionStart"], perms["allow"]} {
		if x != nil && isEmpty(x) {
			return true
		}
		b, _ := json.Marshal(x)
		if bytes.Contains(b, []byte("tasksessiond hook x")) || bytes.Contains(b, []byte(`"mcp__tasks"`)) {
			return true
		}
	}
	return false
}

func isEmpty(x any) bool {
	switch x := x.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// hasEmpty reports whether v holds an empty container, whose inner white
// space an edit and its undo may not give back exactly ({ } for {}).
func hasEmpty(v *hujson.Value) bool {
	for x := range v.All() {
		switch c := x.Value.(type) {
		case *hujson.Object:
			if len(c.Members) == 0 {
				return true
			}
		case *hujson.Array:
			if len(c.Elements) == 0 {
				return true
			}
		}
	}
	return false
}
