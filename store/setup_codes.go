package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
)

const setupCodeAlphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// NewSetupCode returns a random one-time setup code, like "K7QF-MX2D-9RTP"
// (60 bits: guessing it through a throttled form is hopeless).
func NewSetupCode() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	var sb strings.Builder
	for i, c := range b {
		if i > 0 && i%4 == 0 {
			sb.WriteByte('-')
		}
		sb.WriteByte(setupCodeAlphabet[int(c)%len(setupCodeAlphabet)])
	}
	return sb.String()
}

func setupCodeHash(code string) []byte {
	code = strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(code))
	h := sha256.Sum256([]byte(code))
	return h[:]
}

// AddSetupCode records a setup code a starting server offers while no owner exists.
func (s *Store) AddSetupCode(ctx context.Context, code string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO setup_codes (code_hash) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM owners)
		ON CONFLICT DO NOTHING`, setupCodeHash(code))
	if err != nil {
		return false, fmt.Errorf("store: add setup code: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
