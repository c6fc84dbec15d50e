package db

import (
	"context"
	"fmt"
	"strings"
)

// Foreign is a schema object the schema does not define: a trigger (the
// schema has none), a view or an index of another name. A trigger can
// delete or change a row the daemon has just logged and acknowledged, an
// index can make its inserts fail, a view stands where the schema's would:
// the daemon does not start with one, and fsck names it.
type Foreign struct {
	Type, Name, Table string
}

// Drop is the statement that removes f.
func (f Foreign) Drop() string {
	return fmt.Sprintf(`DROP %s "%s";`, strings.ToUpper(f.Type), strings.ReplaceAll(f.Name, `"`, `""`))
}

func (f Foreign) String() string {
	return fmt.Sprintf("%s %s on %s, which the schema does not define (sqlite3: %s)", f.Type, f.Name, f.Table, f.Drop())
}

// views are the schema's views (a test holds them to a migrated database).
var views = map[string]bool{"tasks": true, "open_tasks": true, "session_overview": true, "call_log": true}

// ForeignObjects lists the schema objects the schema does not define, in
// name order; nil when there are none.
func (d *DB) ForeignObjects(ctx context.Context) ([]Foreign, error) { return foreignObjects(ctx, d.q) }

func foreignObjects(ctx context.Context, q querier) ([]Foreign, error) {
	var rows []struct {
		Type   string `db:"type"`
		Name   string `db:"name"`
		Table  string `db:"tbl_name"`
		HasSQL bool   `db:"has_sql"`
	}
	if err := q.SelectContext(ctx, &rows, `SELECT type, name, tbl_name, sql IS NOT NULL AS has_sql FROM sqlite_master WHERE type IN ('trigger', 'view', 'index') ORDER BY name`); err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	known := map[string]bool{}
	for _, ix := range Indexes {
		known[ix.Name] = true
	}
	var out []Foreign
	for _, r := range rows {
		switch {
		// SQLite's own automatic indexes (of a PRIMARY KEY or UNIQUE)
		// have no SQL: one of that name with a CREATE INDEX statement was
		// renamed with writable_schema, and is as foreign as any other.
		case r.Type == "view" && views[r.Name],
			r.Type == "index" && known[r.Name],
			r.Type == "index" && strings.HasPrefix(r.Name, "sqlite_autoindex_") && !r.HasSQL:
			continue
		}
		out = append(out, Foreign{Type: r.Type, Name: r.Name, Table: r.Table})
	}
	return out, nil
}

// refuseForeignObjects is the daemon's refusal to start beside a foreign
// schema object.
func refuseForeignObjects(ctx context.Context, path string, q querier) error {
	found, err := foreignObjects(ctx, q)
	if err != nil || len(found) == 0 {
		return err
	}
	var what, drops []string
	for _, f := range found {
		what = append(what, fmt.Sprintf("%s %s on %s", f.Type, f.Name, f.Table))
		drops = append(drops, f.Drop())
	}
	return fmt.Errorf("database %s holds schema objects tasksessiond does not define, which could change or hide what it logs: %s; the daemon does not run beside them: drop them (sqlite3 %s '%s') or restore a backup",
		path, strings.Join(what, ", "), path, strings.Join(drops, " "))
}
