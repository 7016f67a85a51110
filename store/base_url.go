package store

import (
	"context"
)

// RecordBaseURL remembers the public base URL a starting server serves, so that command-line tools
// on the same database bind tokens to the address agents actually reach.
func (s *Store) RecordBaseURL(ctx context.Context, baseURL string) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO served_base_url (base_url) VALUES ($1)
		ON CONFLICT (singleton) DO UPDATE SET base_url = EXCLUDED.base_url, recorded_at = now()`, baseURL)
	if err != nil {
		return wrap("record base url", err)
	}
	return nil
}

// ServedBaseURL returns the base URL the last server started with, or
// ErrNotFound when no server has started on this database.
func (s *Store) ServedBaseURL(ctx context.Context) (string, error) {
	var u string
	if err := s.pool.QueryRow(ctx, `SELECT base_url FROM served_base_url`).Scan(&u); err != nil {
		return "", wrap("served base url", err)
	}
	return u, nil
}
