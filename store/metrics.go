package store

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// StatementCounts are the statements a Store has sent to PostgreSQL (BEGIN and COMMIT included), by
// what they were sent for.
type StatementCounts struct {
	// Request counts statements sent while serving a request.
	Request uint64
	// Background counts those of background work (the listener, the mail cache's reload and sweep,
	// the webhook sender, metrics read at scrape time).
	Background uint64
	// RequestRoundTrips counts the round trips of Request's statements.
	RequestRoundTrips uint64
}

type statementCounter struct {
	request, background, requestTrips atomic.Uint64
}

type backgroundKey struct{}

// Background marks ctx as background work: the statements sent under it
// count in StatementCounts.Background, so that a request path's own count
// stays exact while senders and listeners run beside it.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.count(ctx)
	if ctx.Value(backgroundKey{}) == nil {
		c.requestTrips.Add(1)
	}
	return ctx
}

func (c *statementCounter) count(ctx context.Context) {
	if ctx.Value(backgroundKey{}) != nil {
		c.background.Add(1)
	} else {
		c.request.Add(1)
	}
}

func (*statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	if ctx.Value(backgroundKey{}) == nil {
		c.requestTrips.Add(1)
	}
	return ctx
}

func (c *statementCounter) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchQueryData) {
	c.count(ctx)
}

func (*statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// StatementCounts returns the statements sent so far through this store's
// pool and its listener's connection (none when the pool came from New, or a
// tune function of Open replaced the tracer).
func (s *Store) StatementCounts() StatementCounts {
	return StatementCounts{Request: s.statements.request.Load(), Background: s.statements.background.Load(),
		RequestRoundTrips: s.statements.requestTrips.Load()}
}

// PoolStat is a snapshot of the connection pool, for metrics.
func (s *Store) PoolStat() *pgxpool.Stat { return s.pool.Stat() }
