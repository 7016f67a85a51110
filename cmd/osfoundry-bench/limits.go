package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/osfoundry/osfoundry/store"
)

// The bench's agents write as fast as the server answers, far past what a
// project lets one agent write (a token bucket per connection). The bench's
// project allows the most a project may (store.MaxWritesPerMinute, bursts
// of store.MaxWriteBurst), and every step that writes starts with its
// agents' buckets full, so that a step measures the write path with its
// bucket granting; a refusal past them still happens as it would, and is
// counted as refused, apart from the errors.

// benchWriteLimits are the bench project's write limits.
var benchWriteLimits = store.WriteLimits{PerMinute: store.MaxWritesPerMinute, Burst: store.MaxWriteBurst}

// errRefused is a write refused past its connection's write limit: the
// isError result that says when to try again.
type errRefused struct{ msg string }

func (e *errRefused) Error() string { return e.msg }

// refusal returns the refusal in a JSON-RPC answer b, or nil for none.
func refusal(b []byte) error {
	if bytes.Contains(b, []byte(`"isError":true`)) && bytes.Contains(b, []byte(`"retry_after_seconds"`)) {
		return &errRefused{fmt.Sprintf("refused: %.300s", b)}
	}
	return nil
}

// isRefused reports whether err is a write refused past the write limit.
func isRefused(err error) bool {
	var r *errRefused
	return errors.As(err, &r)
}

// fillBuckets fills the write buckets of the bench's agents.
func (fx *fixture) fillBuckets(ctx context.Context) error {
	ids := make([]int64, len(fx.agents))
	for i, a := range fx.agents {
		ids[i] = a.connectionID
	}
	_, err := fx.pool.Exec(ctx, `UPDATE write_buckets SET tokens = burst, refilled_at = now() WHERE connection_id = ANY($1)`, ids)
	return err
}
