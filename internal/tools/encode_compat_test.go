package tools_test

// Results are encoded by json/v2 with encoding/json's options; they must
// read as encoding/json wrote them (SetEscapeHTML(false)) before: a stored
// result re-rendered otherwise would answer a retry with other bytes than
// the first answer. Only text that is not UTF-8 differs, in bytes alone:
// encoding/json writes each bad byte as the escape \ufffd, json/v2 as
// U+FFFD itself; the same value either way.

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func encodeV1(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var trickyText = []string{
	"line\u2028sep\u2029para", "<b>&amp;</b>", "nul\x00soh\x01bs\x08ff\x0cus\x1fdel\x7f", "\b\f\n\r\t\"\\/",
	"bad \xff byte", "cut \xe2\x82", "surrogate \xed\xa0\x80 encoded", "past \xf4\x90\x80\x80 max",
	"\ufffd replacement", "é 日本 😀", "\u0085 nel \u00a0 nbsp \ufeff bom", strings.Repeat("x", 70) + "\xc0\xaf",
}

// same reports whether got is what encoding/json wrote (want) for text s:
// the same bytes, or for text that is not UTF-8 the same value.
func same(s string, want, got []byte) bool {
	if utf8.ValidString(s) {
		return string(want) == string(got)
	}
	var x, y any
	return json.Unmarshal(want, &x) == nil && json.Unmarshal(got, &y) == nil && reflect.DeepEqual(x, y)
}

func TestResultsReadAsEncodingJSONWroteThem(t *testing.T) {
	ints := []int{0, 1, 1 << 53, math.MaxInt64, math.MinInt64, -1}
	differ := map[string][]string{}
	defer func() {
		for s, names := range differ {
			t.Errorf("%q: %d encodings differ from encoding/json's (%v)", s, len(names), names[:min(3, len(names))])
		}
	}()
	for _, s := range trickyText {
		for _, n := range ints {
			task := tasksessiond.Task{Taskid: n, Status: tasksessiond.Pending, Subject: s, Description: s}
			counts := tasksessiond.Counts{Total: n, Pending: n}
			written := wire.Written{Task: wire.Brief{Taskid: n, Status: tasksessiond.InProgress, Subject: s},
				Overview: wire.Overview{Counts: counts, InProgress: []int{n, 3}}}
			for name, v := range map[string]any{
				"Written":       written,
				"Listing":       wire.Listing{Counts: counts, Note: s, Tasks: []tasksessiond.Task{task}, Folded: []wire.Fold{{From: n, To: n}}, MoreOpen: n},
				"EmptyListing":  wire.Listing{},
				"Got":           wire.Got{Counts: counts, Task: task},
				"Result":        tools.Result{Content: []wire.Content{{Type: "text", Text: s}}, StructuredContent: written},
				"ErrorResult":   tools.ErrorResult(s),
				"ErrorResponse": jsonrpc.ErrorResponse(json.RawMessage(`1`), jsonrpc.Errorf(wire.CodeInvalidParams, "%s", s)),
			} {
				got, err := jsonrpc.Encode(nil, v)
				require.NoError(t, err)
				if want := encodeV1(t, v); !same(s, want, got) {
					differ[s] = append(differ[s], name)
				}
			}
		}
	}
}

func TestEncodeAndRestoreReadAsEncodingJSONWroteThem(t *testing.T) {
	// Whole results as a live call renders them, and as a retry restores
	// them from the log, against encoding/json's encoding of the same.
	for _, s := range trickyText {
		st := store.New()
		st.Create("first", "")
		for _, c := range []tools.Call{
			{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: &s, Description: &s}},
			{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 1, Status: tasksessiond.InProgress, Subject: &s}},
			{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 2}},
			{Name: tools.TaskList},
			{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 99}},
		} {
			res, _ := tools.Execute(st, c)
			full, stored, err := tools.Encode(res)
			require.NoError(t, err)
			want := encodeV1(t, res)
			if !same(s, want, full) {
				t.Errorf("%s of %q: encoding/json %s\n json/v2 %s", c.Name, s, want, full)
			}
			back, err := tools.Restore(stored)
			require.NoError(t, err)
			assert.Equal(t, string(full), string(back), "%s of %q restored", c.Name, s)
		}
	}
}
