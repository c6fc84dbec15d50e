package db

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/pressly/goose/v3"

	"github.com/tasksessiond/tasksessiond/migrations"
)

// OlderSchemaError is a database at an older schema than this binary's,
// opened by a caller that must not upgrade it (an upgrade is one-way).
type OlderSchemaError struct {
	Path          string
	Schema, Known int64
}

func (e *OlderSchemaError) Error() string {
	return fmt.Sprintf("database %s is at schema %d, this binary's is %d: schema %d: start the daemon once to upgrade it (the database is left as it is)",
		e.Path, e.Schema, e.Known, e.Schema)
}

// Schema is the schema the database is at (0: none yet).
func (d *DB) Schema(ctx context.Context) (int64, error) { return schemaOf(ctx, d.q) }

// View is a view of the schema.
type View struct {
	Name string
	SQL  string // its CREATE VIEW statement
}

// Views are the current schema's views as its migrations create them, in
// the order they create them (a view may read another): read once from
// an empty database the migrations are run on, so that they are the
// migrations' own definitions, whichever migration last changed each.
var Views = sync.OnceValues(func() ([]View, error) {
	ctx := context.Background()
	ref, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("the schema's views: %w", err)
	}
	defer ref.Close()
	ref.SetMaxOpenConns(1) // one connection: one in-memory database
	p, err := goose.NewProvider(goose.DialectSQLite3, ref, migrations.FS)
	if err != nil {
		return nil, fmt.Errorf("the schema's views: load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return nil, fmt.Errorf("the schema's views: migrate: %w", err)
	}
	rows, err := ref.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("the schema's views: %w", err)
	}
	defer rows.Close()
	var out []View
	for rows.Next() {
		var v View
		if err := rows.Scan(&v.Name, &v.SQL); err != nil {
			return nil, fmt.Errorf("the schema's views: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
})

// ViewProblems says which views of Views are missing or not as the
// schema defines them. Nil when all are as defined.
func (d *DB) ViewProblems(ctx context.Context) ([]string, error) {
	want, err := Views()
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Name string         `db:"name"`
		SQL  sql.NullString `db:"sql"`
	}
	if err := d.q.SelectContext(ctx, &rows, `SELECT name, sql FROM sqlite_master WHERE type = 'view'`); err != nil {
		return nil, fmt.Errorf("read the views: %w", err)
	}
	have := make(map[string]string, len(rows))
	for _, r := range rows {
		have[r.Name] = r.SQL.String
	}
	var out []string
	for _, v := range want {
		got, ok := have[v.Name]
		switch {
		case !ok:
			out = append(out, "view "+v.Name+" is missing (tasksessiond fsck --repair creates it from the schema's definition)")
		case squash(got) != squash(v.SQL):
			out = append(out, fmt.Sprintf("view %s is not as the schema defines it (tasksessiond fsck --repair makes it again from the schema's definition): %s", v.Name, got))
		}
	}
	return out, nil
}

// RebuildViews makes every view of Views that is missing or not as
// defined again from its definition, in one transaction. A view holds no
// data: it is only its definition.
func (d *DB) RebuildViews(ctx context.Context) (made []string, err error) {
	want, err := Views()
	if err != nil {
		return nil, err
	}
	var have []struct {
		Name string         `db:"name"`
		SQL  sql.NullString `db:"sql"`
	}
	if err := d.w.SelectContext(ctx, &have, `SELECT name, sql FROM sqlite_master WHERE type = 'view'`); err != nil {
		return nil, fmt.Errorf("read the views: %w", err)
	}
	defs := make(map[string]string, len(have))
	for _, h := range have {
		defs[h.Name] = h.SQL.String
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("rebuild the views: %w", err)
	}
	defer tx.Rollback()
	for _, v := range want {
		got, ok := defs[v.Name]
		if ok && squash(got) == squash(v.SQL) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DROP VIEW IF EXISTS `+v.Name); err != nil {
			return nil, fmt.Errorf("drop view %s: %w", v.Name, err)
		}
		if _, err := tx.ExecContext(ctx, v.SQL); err != nil {
			return nil, fmt.Errorf("create view %s: %w", v.Name, err)
		}
		made = append(made, v.Name)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("rebuild the views: commit: %w", err)
	}
	return made, nil
}
