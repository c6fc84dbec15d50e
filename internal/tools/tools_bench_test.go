package tools_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func BenchmarkDecode(b *testing.B) {
	for _, tc := range []struct{ name, tool, args string }{
		{"TaskCreate", tools.TaskCreate, `{"subject":"Write the parser tests","description":"Cover the error paths."}`},
		{"TaskUpdate", tools.TaskUpdate, `{"taskid":"#12","status":"in_progress"}`},
		{"TaskList", tools.TaskList, `{}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			args := json.RawMessage(tc.args)
			for b.Loop() {
				if _, _, err := tools.Decode(tc.tool, args, tools.Live); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExecute is a call's in-memory work: apply, render, encode.
func BenchmarkExecute(b *testing.B) {
	for _, n := range []int{10, 1000} {
		st := store.New()
		for range n {
			st.Create("Write the parser tests", "Cover the error paths.")
		}
		for _, tc := range []struct{ name, tool, args string }{
			{"TaskUpdate", tools.TaskUpdate, `{"taskid":1,"status":"inprogress"}`},
			{"TaskList", tools.TaskList, `{}`},
		} {
			call, _, err := tools.Decode(tc.tool, json.RawMessage(tc.args), tools.Live)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(tc.name+"/"+itoa(n), func(b *testing.B) {
				for b.Loop() {
					res, _ := tools.Execute(st, call)
					if _, err := json.Marshal(res); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkListResult is TaskList's result for a session of 10,000 tasks,
// half of them completed: the list does not fit and is fitted (the forced
// TaskList of a compaction costs the same).
func BenchmarkListResult(b *testing.B) {
	st := store.New()
	for i := range 10_000 {
		st.Create("Step "+strconv.Itoa(i+1)+": write the parser tests",
			"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race.")
		if i%2 == 1 {
			done := tasksessiond.Completed
			st.Update(tasksessiond.Change{Taskid: i, Status: done})
		}
	}
	for b.Loop() {
		r := tools.ListResult(st)
		if r.StructuredContent.(wire.Listing).MoreOpen == 0 {
			b.Fatal("not fitted")
		}
	}
}

// BenchmarkChangeAmongClosed is a TaskUpdate's work in a session holding
// 20 open tasks after n closed ones, as a long-running agent's does: its
// result's overview reads the open tasks only, so its cost does not grow
// with n.
func BenchmarkChangeAmongClosed(b *testing.B) {
	for _, n := range []int{0, 10_000} {
		st := store.New()
		done := tasksessiond.Completed
		for i := range n + 20 {
			st.Create("Write the parser tests", "Cover the error paths.")
			if i < n {
				st.Update(tasksessiond.Change{Taskid: i + 1, Status: done})
			}
		}
		call, _, err := tools.Decode(tools.TaskUpdate, json.RawMessage(fmt.Appendf(nil, `{"taskid":%d,"status":"inprogress"}`, n+1)), tools.Live)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(itoa(n)+"-closed", func(b *testing.B) {
			for b.Loop() {
				if res, _ := tools.Execute(st, call); res.IsError {
					b.Fatal(res)
				}
			}
		})
	}
}
