package db

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/jmoiron/sqlx"
)

// preparedReads runs the read queries through statements prepared once per
// query text; database/sql prepares each again, once, on every connection
// that runs it. The tasks view compiles to a large program: compiling it
// for each sessions/get cost some 15 times what running it does.
type preparedReads struct {
	pool  *sqlx.DB
	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

// maxPrepared bounds the statements kept: queries built with a varying
// number of arguments (a page of sessions' counts) beyond it run unprepared.
const maxPrepared = 64

func newPreparedReads(pool *sqlx.DB) *preparedReads {
	return &preparedReads{pool: pool, stmts: map[string]*sqlx.Stmt{}}
}

// stmt returns query's statement, or nil to run it unprepared: past
// maxPrepared, or when preparing failed (running it says why). The lock is
// not held while preparing, which waits for a connection of the pool: the
// statements already prepared stay usable meanwhile.
func (p *preparedReads) stmt(ctx context.Context, query string) *sqlx.Stmt {
	p.mu.Lock()
	s, ok := p.stmts[query]
	full := len(p.stmts) >= maxPrepared
	p.mu.Unlock()
	if ok || full {
		return s
	}
	s, err := p.pool.PreparexContext(ctx, query)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if won, ok := p.stmts[query]; ok || len(p.stmts) >= maxPrepared {
		s.Close() // another caller prepared it first, or the room ran out
		return won
	}
	p.stmts[query] = s
	return s
}

func (p *preparedReads) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	if s := p.stmt(ctx, query); s != nil {
		return s.GetContext(ctx, dest, args...)
	}
	return p.pool.GetContext(ctx, dest, query, args...)
}

func (p *preparedReads) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	if s := p.stmt(ctx, query); s != nil {
		return s.SelectContext(ctx, dest, args...)
	}
	return p.pool.SelectContext(ctx, dest, query, args...)
}

func (p *preparedReads) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.pool.QueryContext(ctx, query, args...)
}

func (p *preparedReads) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.pool.QueryRowContext(ctx, query, args...)
}

// close closes the statements (before their pool).
func (p *preparedReads) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	for q, s := range p.stmts {
		err = errors.Join(err, s.Close())
		delete(p.stmts, q)
	}
	return err
}
