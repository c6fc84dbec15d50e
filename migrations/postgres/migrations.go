// Package postgres embeds the PostgreSQL schema migrations (fleet mode),
// run by goose when a daemon starts on a postgres:// database.
package postgres

import "embed"

// FS holds the numbered migration files.
//
//go:embed *.sql
var FS embed.FS
