package pgdb_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/pgdb"
)

func TestRedact(t *testing.T) {
	// Ensures no secret of a connection string, in any form pgx reads,
	// reaches status or the logs.
	for in, want := range map[string]string{
		"postgres://tsd:s3cret@db:5432/tasks?sslmode=verify-full": "postgres://tsd:xxxxx@db:5432/tasks?sslmode=verify-full",
		"postgres://tsd@db/tasks?password=s3cret&sslmode=require": "postgres://tsd@db/tasks?password=xxxxx&sslmode=require",
		"postgresql://db/tasks?user=tsd&PASSWORD=s3cret":          "postgresql://db/tasks?PASSWORD=xxxxx&user=tsd",
		"postgres://db/tasks?sslpassword=s3cret&sslkey=/k":        "postgres://db/tasks?sslkey=%2Fk&sslpassword=xxxxx",
		"host=db user=tsd password=s3cret dbname=tasks":           "host=db user=tsd password=xxxxx dbname=tasks",
		"host=db password = 's3 cr\\'et' dbname=tasks":            "host=db password=xxxxx dbname=tasks",
		"host=db sslpassword=s3cret":                              "host=db sslpassword=xxxxx",
		"postgres://db/tasks":                                     "postgres://db/tasks",
		"postgres://tsd:s3cret@db:bad port/x":                     "postgres://(unparsable URL, not shown)",
	} {
		got := pgdb.Redact(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "s3", in)
	}
}
