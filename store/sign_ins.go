package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// SignIn is one signed-in browser of an owner. Its cookie holds a random
// token; the database keeps only the token's SHA-256, so that reading the
// table signs no one in.
type SignIn struct {
	ID          int64
	OwnerID     int64
	WorkspaceID int64
	CreatedAt   time.Time
	LastSeenAt  time.Time
	RemoteAddr  string
	UserAgent   string
}

// How long a sign-in lasts: at most SignInLifetime from its creation,
// however often it is used, and SignInIdle after its last use.
const (
	SignInLifetime = 30 * 24 * time.Hour
	SignInIdle     = 7 * 24 * time.Hour
)

// EndsAt is when the sign-in ends unless it is used again before.
func (si *SignIn) EndsAt() time.Time {
	end, idle := si.CreatedAt.Add(SignInLifetime), si.LastSeenAt.Add(SignInIdle)
	if idle.Before(end) {
		return idle
	}
	return end
}

// Limits of what a sign-in records about the browser.
const (
	maxSignInAddr      = 100
	maxSignInUserAgent = 300
)

var signInLive = fmt.Sprintf(`created_at > now() - interval '%d seconds' AND last_seen_at > now() - interval '%d seconds'`,
	int(SignInLifetime.Seconds()), int(SignInIdle.Seconds()))

const signInColumns = `id, owner_id, workspace_id, created_at, last_seen_at, remote_addr, user_agent`

func scanSignIn(row pgx.Row) (*SignIn, error) {
	si := &SignIn{}
	err := row.Scan(&si.ID, &si.OwnerID, &si.WorkspaceID, &si.CreatedAt, &si.LastSeenAt, &si.RemoteAddr, &si.UserAgent)
	return si, err
}

// SignInTokenHash is what the database keeps of a sign-in's token.
func SignInTokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CreateSignIn records a new sign-in of the owner from a browser (its
// address and user agent, shortened to what the account page shows) and
// returns the token its cookie carries, with its audit row. The owner's
// sign-ins that have ended are deleted on the way; a removed owner gets
// none (ErrNotFound).
func (s *Store) CreateSignIn(ctx context.Context, o *Owner, addr, userAgent string) (string, *SignIn, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("store: create sign-in: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	var si *SignIn
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		si, err = scanSignIn(tx.QueryRow(ctx, `
			WITH ended AS (DELETE FROM sign_ins WHERE owner_id = $2 AND NOT (`+signInLive+`))
			INSERT INTO sign_ins (token_hash, owner_id, workspace_id, remote_addr, user_agent)
			SELECT $1, $2, $3, $4, $5 FROM owners WHERE id = $2 AND workspace_id = $3 AND removed_at IS NULL
			RETURNING `+signInColumns,
			SignInTokenHash(token), o.ID, o.WorkspaceID, shorten(addr, maxSignInAddr), shorten(userAgent, maxSignInUserAgent)))
		if err != nil {
			return err
		}
		return insertAudit(ctx, tx, Actor{OwnerID: o.ID, WorkspaceID: o.WorkspaceID, RemoteAddr: addr, UserAgent: userAgent}, o.DisplayName,
			AuditEntry{Kind: AuditSignIn, Subject: fmt.Sprintf("sign-in %d", si.ID), Detail: map[string]any{"sign_in_id": si.ID}})
	})
	if err != nil {
		return "", nil, wrap("create sign-in", err)
	}
	return token, si, nil
}

func shorten(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "")
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// SignInTouchEvery is how often a sign-in in use renews its last-seen time, from which its idle end
// counts.
const SignInTouchEvery = 5 * time.Minute

// SignInByToken returns the sign-in a cookie's token names, renewing its last-seen time when that
// is SignInTouchEvery old (by the database's clock), in one statement.
func (s *Store) SignInByToken(ctx context.Context, token string) (*SignIn, error) {
	si, err := scanSignIn(s.pool.QueryRow(ctx, `
		WITH s AS (SELECT `+signInColumns+` FROM sign_ins WHERE token_hash = $1 AND `+signInLive+`),
		t AS (
			UPDATE sign_ins SET last_seen_at = now() FROM s
			WHERE sign_ins.id = s.id AND s.last_seen_at < now() - make_interval(secs => $2)
			RETURNING sign_ins.last_seen_at
		)
		SELECT s.id, s.owner_id, s.workspace_id, s.created_at, coalesce((SELECT last_seen_at FROM t), s.last_seen_at), s.remote_addr, s.user_agent
		FROM s`, SignInTokenHash(token), SignInTouchEvery.Seconds()))
	if err != nil {
		return nil, wrap("sign-in by token", err)
	}
	return si, nil
}

// ListSignIns lists the owner's sign-ins that have not ended, the most
// recently used first.
func (s *Store) ListSignIns(ctx context.Context, ownerID int64) ([]SignIn, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+signInColumns+` FROM sign_ins WHERE owner_id = $1 AND `+signInLive+`
		ORDER BY last_seen_at DESC, id DESC`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: list sign-ins: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SignIn, error) {
		si, err := scanSignIn(r)
		return *si, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list sign-ins: %w", err)
	}
	return out, nil
}

// EndSignIn ends one sign-in of the actor (signing out, or "Sign out" on the account page), on
// every replica, with its audit row.
func (s *Store) EndSignIn(ctx context.Context, a Actor, id int64) error {
	_, err := s.endSignInsAs(ctx, a, `owner_id = $1 AND id = $2`, id)
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: end sign-in: %w", err)
}

// EndOtherSignIns ends every sign-in of the actor but keep, and returns
// how many ended.
func (s *Store) EndOtherSignIns(ctx context.Context, a Actor, keep int64) (int, error) {
	n, err := s.endSignInsAs(ctx, a, `owner_id = $1 AND id <> $2`, keep)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: end other sign-ins: %w", err)
	}
	return n, nil
}

func (s *Store) endSignInsAs(ctx context.Context, a Actor, where string, arg int64) (int, error) {
	var ended []int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if ended, err = endSignIns(ctx, tx, where, a.OwnerID, arg); err != nil {
			return err
		}
		if len(ended) == 0 {
			return ErrNotFound
		}
		var name string
		if err := tx.QueryRow(ctx, `SELECT display_name FROM owners WHERE id = $1 AND workspace_id = $2`, a.OwnerID, a.WorkspaceID).Scan(&name); err != nil {
			return err
		}
		return insertAudit(ctx, tx, a, name, AuditEntry{Kind: AuditSignOut, Subject: fmt.Sprintf("%d sign-in(s) ended", len(ended)),
			Detail: map[string]any{"sign_in_ids": ended}})
	})
	if err != nil {
		return 0, err
	}
	s.notifySignOuts(ended)
	return len(ended), nil
}

func endSignIns(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, where string, args ...any) ([]int64, error) {
	rows, err := q.Query(ctx, `DELETE FROM sign_ins WHERE `+where+` RETURNING id`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// notifySignOuts tells every replica that these sign-ins ended (SignOutTopic).
func (s *Store) notifySignOuts(ids []int64) {
	ns := make([]notification, len(ids))
	for i, id := range ids {
		ns[i] = SignOutTopic.notification(id)
	}
	s.notifyAfterCommit(ns...)
}
