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
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// AnswerLinkLifetime is how long an answer link works.
const AnswerLinkLifetime = 24 * time.Hour

const answerLinkSecret = "answer_links"

// Refusals of an answer link.
var (
	// ErrLinkInvalid: the token is malformed, forged, or names no link.
	ErrLinkInvalid = errors.New("this answer link is not valid")
	// ErrLinkExpired: the link is older than AnswerLinkLifetime.
	ErrLinkExpired = errors.New("this answer link has expired")
	// ErrLinkSpent: the link answered once already.
	ErrLinkSpent = errors.New("this answer link was used already")
)

// AnswerLink is a link of a question's email, and what it answers with.
type AnswerLink struct {
	ID          int64
	WorkspaceID int64
	OwnerID     int64
	OwnerName   string
	QuestionID  int64
	// Option is the index of the option it answers with; nil for the link
	// to a free-text answer.
	Option    *int
	ExpiresAt time.Time
	UsedAt    *time.Time
}

type linkKey struct {
	mu  sync.Mutex
	key []byte
}

func (s *Store) answerLinkKey(ctx context.Context) ([]byte, error) {
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	if s.links.key == nil {
		k, err := s.ServerSecret(ctx, answerLinkSecret)
		if err != nil {
			return nil, err
		}
		s.links.key = k
	}
	return s.links.key, nil
}

func signLink(key []byte, l *AnswerLink) string {
	m := hmac.New(sha256.New, key)
	opt := "free"
	if l.Option != nil {
		opt = strconv.Itoa(*l.Option)
	}
	fmt.Fprintf(m, "answer-link:%d:%d:%d:%d:%s", l.ID, l.WorkspaceID, l.OwnerID, l.QuestionID, opt)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Store) createAnswerLinks(ctx context.Context, tx pgx.Tx, q *Question, ownerID int64) ([]string, error) {
	key, err := s.answerLinkKey(ctx)
	if err != nil {
		return nil, err
	}
	opts := make([]*int, 0, len(q.Options)+1)
	for i := range q.Options {
		opts = append(opts, &i)
	}
	opts = append(opts, nil)
	tokens := make([]string, 0, len(opts))
	for _, o := range opts {
		l := &AnswerLink{WorkspaceID: q.WorkspaceID, OwnerID: ownerID, QuestionID: q.ID, Option: o}
		if err := tx.QueryRow(ctx, `
			INSERT INTO answer_links (workspace_id, owner_id, question_id, option_index, expires_at)
			VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
			RETURNING id, expires_at`, l.WorkspaceID, ownerID, q.ID, o, AnswerLinkLifetime.Milliseconds()).Scan(&l.ID, &l.ExpiresAt); err != nil {
			return nil, fmt.Errorf("create answer link: %w", err)
		}
		tokens = append(tokens, strconv.FormatInt(l.ID, 10)+"."+signLink(key, l))
	}
	return tokens, nil
}

// AnswerLinkOf checks a token (an HMAC of its row under a server secret, so none can be made up)
// and returns its link, with the question it answers. A GET never answers, since mail scanners
// follow links.
func (s *Store) AnswerLinkOf(ctx context.Context, token string) (*AnswerLink, *Question, error) {
	idText, mac, ok := strings.Cut(token, ".")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || id <= 0 || len(mac) != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return nil, nil, ErrLinkInvalid
	}
	key, err := s.answerLinkKey(ctx)
	if err != nil {
		return nil, nil, err
	}
	l := &AnswerLink{ID: id}
	var expired bool
	err = s.pool.QueryRow(ctx, `
		SELECT l.workspace_id, l.owner_id, o.display_name, l.question_id, l.option_index, l.expires_at, l.used_at, l.expires_at <= now()
		FROM answer_links l JOIN owners o ON o.id = l.owner_id AND o.workspace_id = l.workspace_id
		WHERE l.id = $1`, id).Scan(&l.WorkspaceID, &l.OwnerID, &l.OwnerName, &l.QuestionID, &l.Option, &l.ExpiresAt, &l.UsedAt, &expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, ErrLinkInvalid
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: answer link: %w", err)
	}
	if !hmac.Equal([]byte(mac), []byte(signLink(key, l))) {
		return nil, nil, ErrLinkInvalid
	}
	q, err := s.OwnerQuestion(ctx, l.WorkspaceID, l.QuestionID)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case l.UsedAt != nil:
		return l, q, ErrLinkSpent
	case expired:
		return l, q, ErrLinkExpired
	}
	return l, q, nil
}

// AnswerByLink answers a question through an answer link, as the owner the link was mailed to, in
// the workspace it belongs to.
func (s *Store) AnswerByLink(ctx context.Context, token, text string) (*Question, error) {
	l, _, err := s.AnswerLinkOf(ctx, token)
	if err != nil {
		return nil, err
	}
	return s.answer(ctx, Answer{WorkspaceID: l.WorkspaceID, OwnerID: l.OwnerID, QuestionID: l.QuestionID, Option: l.Option, Text: text}, l.ID)
}
