package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ApprovalLink is a link of an approval's email.
type ApprovalLink struct {
	ID          int64
	WorkspaceID int64
	OwnerID     int64
	OwnerName   string
	ApprovalID  int64
	// Verdict is "allow" or "deny".
	Verdict   string
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func signApprovalLink(key []byte, l *ApprovalLink) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "approval-link:%d:%d:%d:%d:%s", l.ID, l.WorkspaceID, l.OwnerID, l.ApprovalID, l.Verdict)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Store) createApprovalLinks(ctx context.Context, tx pgx.Tx, a *Approval, ownerID int64) (allow, deny string, err error) {
	key, err := s.answerLinkKey(ctx)
	if err != nil {
		return "", "", err
	}
	var tokens []string
	for _, v := range []string{"allow", "deny"} {
		l := &ApprovalLink{WorkspaceID: a.WorkspaceID, OwnerID: ownerID, ApprovalID: a.ID, Verdict: v}
		if err := tx.QueryRow(ctx, `
			INSERT INTO approval_links (workspace_id, owner_id, approval_id, verdict, expires_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, l.WorkspaceID, ownerID, a.ID, v, a.ExpiresAt).Scan(&l.ID); err != nil {
			return "", "", fmt.Errorf("create approval link: %w", err)
		}
		tokens = append(tokens, strconv.FormatInt(l.ID, 10)+"."+signApprovalLink(key, l))
	}
	return tokens[0], tokens[1], nil
}

// ApprovalLinkOf checks a token and returns its link, with the approval it
// decides. ErrLinkInvalid: malformed, forged or unknown; ErrLinkSpent and
// ErrLinkExpired come with the link and the approval.
func (s *Store) ApprovalLinkOf(ctx context.Context, token string) (*ApprovalLink, *Approval, error) {
	idText, mac, ok := strings.Cut(token, ".")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || id <= 0 || len(mac) != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return nil, nil, ErrLinkInvalid
	}
	key, err := s.answerLinkKey(ctx)
	if err != nil {
		return nil, nil, err
	}
	l := &ApprovalLink{ID: id}
	var expired bool
	err = s.pool.QueryRow(ctx, `
		SELECT l.workspace_id, l.owner_id, o.display_name, l.approval_id, l.verdict, l.expires_at, l.used_at, l.expires_at <= now()
		FROM approval_links l JOIN owners o ON o.id = l.owner_id AND o.workspace_id = l.workspace_id
		WHERE l.id = $1`, id).Scan(&l.WorkspaceID, &l.OwnerID, &l.OwnerName, &l.ApprovalID, &l.Verdict, &l.ExpiresAt, &l.UsedAt, &expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, ErrLinkInvalid
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: approval link: %w", err)
	}
	if !hmac.Equal([]byte(mac), []byte(signApprovalLink(key, l))) {
		return nil, nil, ErrLinkInvalid
	}
	a, err := s.OwnerApproval(ctx, l.WorkspaceID, l.ApprovalID)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case l.UsedAt != nil:
		return l, a, ErrLinkSpent
	case expired:
		return l, a, ErrLinkExpired
	}
	return l, a, nil
}

// DecideByLink decides an approval through one of its email's links, as the owner it was mailed to,
// with the link's verdict (and, for a denial, reason).
func (s *Store) DecideByLink(ctx context.Context, token, reason, from string) (*Approval, error) {
	l, _, err := s.ApprovalLinkOf(ctx, token)
	if err != nil {
		return nil, err
	}
	return s.decide(ctx, Decision{WorkspaceID: l.WorkspaceID, OwnerID: l.OwnerID, ApprovalID: l.ApprovalID, Allow: l.Verdict == "allow",
		Reason: reason, From: from}, l.ID)
}
