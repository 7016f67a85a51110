package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// The bench's agents write as fast as the server answers, far past what a
// project lets one agent write (a token bucket per connection). The bench's
// project allows the most a project may (store.MaxWritesPerMinute, bursts
// of store.MaxWriteBurst), every step that writes starts with its agents'
// buckets full, and a worker writes as each of the agents its share of them
// in turn (writer), so that a step measures the write path with its bucket
// granting; a refusal past them still happens as it would, and is counted
// as refused, apart from the errors.

// benchWriteLimits are the bench project's write limits.
var benchWriteLimits = store.WriteLimits{PerMinute: store.MaxWritesPerMinute, Burst: store.MaxWriteBurst}

// benchPageLimits are the --page-limits of the server the bench starts: its
// owners load search and the inbox thousands of times a second on one
// sign-in, where the default allows 60 a minute (a --url server needs them
// raised the same way).
const benchPageLimits = "10000000,1000000"

// errRefused is a call refused past a limit: a write past its connection's
// write limit (the isError result that says when to try again), or an owner
// page past the page limits (429).
type errRefused struct{ msg string }

func (e *errRefused) Error() string { return e.msg }

// pageRefusal returns the refusal of an owner page that answered status, or
// nil when it was not refused.
func pageRefusal(path string, status int) error {
	if status == http.StatusTooManyRequests {
		return &errRefused{fmt.Sprintf("refused: %s answered 429", path)}
	}
	return nil
}

// refusal returns the refusal in a JSON-RPC answer b, or nil for none.
func refusal(b []byte) error {
	if bytes.Contains(b, []byte(`"isError":true`)) && bytes.Contains(b, []byte(`"retry_after_seconds"`)) {
		return &errRefused{fmt.Sprintf("refused: %.300s", b)}
	}
	return nil
}

// isRefused reports whether err is a call refused past a limit.
func isRefused(err error) bool {
	var r *errRefused
	return errors.As(err, &r)
}

// writer is the agent worker w writes its i-th call as, at the concurrency
// of the step (level): each worker has len(agents)/level of them, taken in
// turn, all invited to every session, so that the session stays the
// worker's.
func (fx *fixture) writer(w, i int) int {
	n := len(fx.agents) / max(fx.level, 1)
	if n <= 1 {
		return w
	}
	return w + fx.level*(i%n)
}

// fillBuckets fills the write buckets of the bench's agents.
func (fx *fixture) fillBuckets(ctx context.Context) error {
	ids := make([]int64, len(fx.agents))
	for i, a := range fx.agents {
		ids[i] = a.connectionID
	}
	return testfactory.FillBuckets(ctx, fx.pool, ids)
}
