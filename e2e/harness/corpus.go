package harness

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CorpusCase is a user's configuration as setup may find it: the
// harness's own files (by path under the host's config dir) changed as a
// user keeps them.
type CorpusCase struct {
	Name string
	// Edit changes the files (path under the dir: text); it may add some.
	Edit func(files map[string]string)
	// Links are files kept elsewhere (dotfiles) and linked from their place.
	Links []string
	// Refused, when set, is what setup says refusing the files, which
	// then stay as they were, the host still reading them.
	Refused string
}

// SetupCorpus runs "tasksessiond setup NAME" on each case in dir, the
// host's config dir: setup, then setup again changes no byte, then
// --uninstall gives back every byte (links kept, no backup left), then
// setup once more and read, the host's own CLI reading what setup wrote
// (it fails the test when the host cannot; setUp says whether setup's
// server should be there). A refused case is left as it was, and read.
func (h *Host) SetupCorpus(t *testing.T, name, dir string, cases []CorpusCase, read func(t *testing.T, setUp bool)) {
	t.Helper()
	start := tree(t, dir)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			restore(t, dir, start)
			files := map[string]string{}
			for rel, text := range start {
				files[rel] = text
			}
			c.Edit(files)
			for rel, text := range files {
				h.WriteFile(filepath.Join(dir, rel), text, 0o600)
			}
			for _, rel := range c.Links {
				p := filepath.Join(dir, rel)
				target := filepath.Join(dir, "dotfiles", strings.ReplaceAll(rel, "/", "_"))
				h.Mkdir(filepath.Dir(target))
				if err := os.Rename(p, target); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
			}
			user := tree(t, dir)
			if c.Refused != "" {
				out, err := h.RunTSD([]string{"setup", name, "--socket", h.Daemon.Socket, "--db", h.Daemon.DB})
				if err == nil || !strings.Contains(out, c.Refused) {
					t.Fatalf("setup did not refuse, saying %q: %v\n%s", c.Refused, err, out)
				}
				same(t, user, tree(t, dir), "a refused setup changed a file")
				read(t, false)
				return
			}
			h.Setup(t, name)
			set := tree(t, dir)
			h.Setup(t, name)
			same(t, set, tree(t, dir), "a second setup changed a file")
			h.Setup(t, name, "--uninstall")
			same(t, user, tree(t, dir), "--uninstall did not give back the user's bytes")
			h.Setup(t, name)
			same(t, set, tree(t, dir), "setup after uninstall wrote otherwise")
			read(t, true)
		})
	}
	restore(t, dir, start)
}

// tree is every file under dir, a link as "-> " and where it points then
// what is there (a link to a directory, as a host's node_modules, is
// left out); backups are files like any other.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		text := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return nil
			}
			to, _ := os.Readlink(p)
			text = "-> " + to + "\n"
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = text + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restore puts dir's files back as files held them: one not there then
// is removed, one that differs written again.
func restore(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range tree(t, dir) {
		if w, ok := files[rel]; !ok || w != text {
			if err := os.Remove(filepath.Join(dir, rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := tree(t, dir)
	for rel, text := range files {
		if _, ok := now[rel]; ok {
			continue
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func same(t *testing.T, want, got map[string]string, msg string) {
	t.Helper()
	for rel, w := range want {
		if g, ok := got[rel]; !ok || g != w {
			t.Errorf("%s: %s:\nwant %q\ngot  %q", msg, rel, w, g)
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s: %s is new", msg, rel)
		}
	}
}
