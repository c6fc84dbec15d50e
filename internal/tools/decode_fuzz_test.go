package tools_test

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// FuzzDecode checks that every tool's decoder either rejects arguments with
// an ArgError or returns a call the store can execute, within the bounds.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"subject":"a","description":"b"}`, `{"taskid":"#3","status":"in_progress"}`, `{"taskid":1.0}`,
		`"{\"subject\":\"x\"}"`, `{}`, `null`, `[1]`, `{"taskid":-1}`, `{"subject":"a\nb"}`,
		"\"{\\\"subject\\\":\\\"\xff\\\"}\"", `"{\"subject\":\"\ud800\"}"`,
	} {
		for _, name := range tools.Names() {
			f.Add(name, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if !json.Valid(args) {
			return // the transport only passes valid JSON
		}
		// A log's rules are laxer, and must not fail where live ones do not.
		tools.Decode(name, args, tools.Logged)
		c, _, err := tools.Decode(name, args, tools.Live)
		if err != nil {
			var ae *tools.ArgError
			if !errors.As(err, &ae) && !errors.Is(err, tools.ErrUnknownTool) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if c.Subject != nil && (*c.Subject == "" || utf8.RuneCountInString(*c.Subject) > tools.MaxSubjectRunes) {
			t.Fatalf("subject out of bounds: %q", *c.Subject)
		}
		if c.Description != nil && utf8.RuneCountInString(*c.Description) > tools.MaxDescriptionRunes {
			t.Fatal("description out of bounds")
		}
		st := store.New()
		st.Create("x", "")
		res, _ := tools.Execute(st, c)
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
	})
}
