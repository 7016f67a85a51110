package store

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters (OWASP's second recommended set: 19 MiB, 2 passes).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
)

// MinPasswordLength is the shortest password an owner may choose.
const MinPasswordLength = 10

// HashPassword returns an argon2id hash in the PHC string format.
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("store: hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches a hash made by HashPassword.
func CheckPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("store: check password: not an argon2id hash")
	}
	var version int
	var mem, iter uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil {
		return false, fmt.Errorf("store: check password: %w", err)
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iter, &threads); err != nil {
		return false, fmt.Errorf("store: check password: %w", err)
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("store: check password: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, fmt.Errorf("store: check password: %w", err)
	}
	got := argon2.IDKey([]byte(password), salt, iter, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when an email is unknown, so that a sign-in with an unknown email
// costs as much as one with a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, _ := HashPassword("osfoundry-dummy-password")
	return h
})

// HashGate bounds the password hashes (argon2id, 19 MiB and tens of milliseconds of CPU each) that
// run at once.
type HashGate struct {
	slots   chan struct{}
	run     atomic.Uint64
	refused atomic.Uint64
}

// HashWait is how long a password hash waits for a free slot of the gate.
const HashWait = time.Second

func newHashGate() *HashGate {
	return &HashGate{slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
}

// Acquire takes a slot of the gate, waiting at most HashWait, and returns the function that gives
// it back.
func (g *HashGate) Acquire(ctx context.Context) (release func(), err error) {
	t := time.NewTimer(HashWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	case <-t.C:
		g.refused.Add(1)
		return nil, fmt.Errorf("store: hash password: %w", ErrBusy)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Size is how many hashes may run at once.
func (g *HashGate) Size() int { return cap(g.slots) }

// HashCounts are the password hashes a gate has run and refused.
type HashCounts struct{ Run, Refused uint64 }

// Counts reads the gate's counters (the metrics export them).
func (g *HashGate) Counts() HashCounts {
	return HashCounts{Run: g.run.Load(), Refused: g.refused.Load()}
}

// Hashes is the store's gate of password hashes.
func (s *Store) Hashes() *HashGate { return s.hashes }

func (s *Store) hashPassword(ctx context.Context, password string) (string, error) {
	release, err := s.hashes.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	s.hashes.run.Add(1)
	return HashPassword(password)
}

// checkPassword checks a password against a hash through the gate.
func (s *Store) checkPassword(ctx context.Context, hash, password string) (bool, error) {
	release, err := s.hashes.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	s.hashes.run.Add(1)
	if hash == "" {
		_, _ = CheckPassword(dummyHash(), password)
		return false, nil
	}
	return CheckPassword(hash, password)
}
