package testfactory

import (
	"context"
	"fmt"
)

// FillBuckets fills the write buckets of the connections (store/write_limits.go)
// to their burst, so that a benchmark's next writes are granted as the
// first ones after a quiet spell would be.
func FillBuckets(ctx context.Context, db DB, connectionIDs []int64) error {
	if _, err := db.Exec(ctx, `UPDATE write_buckets SET tokens = burst, refilled_at = now() WHERE connection_id = ANY($1)`, connectionIDs); err != nil {
		return fmt.Errorf("testfactory: fill buckets: %w", err)
	}
	return nil
}
