package store

import (
	"context"
	"crypto/rand"
	"fmt"
)

// ServerSecret returns the named shared secret, creating it (32 random bytes) on first use.
func (s *Store) ServerSecret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, b); err != nil {
		return nil, fmt.Errorf("store: server secret: %w", err)
	}
	var v []byte
	if err := s.pool.QueryRow(ctx, `SELECT value FROM server_secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, wrap("server secret", err)
	}
	return v, nil
}
