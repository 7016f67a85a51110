package store

import (
	"context"
	"expvar"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// QueryCount counts every statement the server sends to PostgreSQL; it is
// published with expvar as "db_queries" (on the --pprof-addr listener), so an
// operator or the benchmark can prove that a path runs no query.
var QueryCount = expvar.NewInt("db_queries")

type countingTracer struct{}

func (countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	QueryCount.Add(1)
	return ctx
}

func (countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// CountQueries makes a pool count its statements in QueryCount.
func CountQueries(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = countingTracer{} }
