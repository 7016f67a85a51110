package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Question states.
const (
	QuestionOpen     = "open"
	QuestionAnswered = "answered"
	QuestionExpired  = "expired"
)

// Urgencies of a question: how soon the owners are reached off the page.
const (
	UrgencyNormal   = "normal"
	UrgencyBlocking = "blocking"
)

// Urgencies are the urgencies ask_owner takes, the default first.
var Urgencies = []string{UrgencyNormal, UrgencyBlocking}

// Limits of a question, in characters.
const (
	MaxQuestionLen = 2000
	MaxOptions     = 5
	MaxOptionLen   = 80
	// MaxAnswerLen bounds a free-text answer.
	MaxAnswerLen = 2000
)

// Question is a question an agent asked, and where it stands.
type Question struct {
	// ID is the question's note id.
	ID           int64
	WorkspaceID  int64
	SessionID    int64
	ConnectionID int64
	// Text is the question (its note's body).
	Text string
	// Options are the answers offered; none means a free-text answer.
	Options []string
	Urgency string
	State   string
	// Answer, AnsweredBy (the owner's display name) and AnsweredByID are set once answered.
	Answer       string
	AnsweredBy   string
	AnsweredByID *int64
	ClosedAt     *time.Time
	// ClosedBy is the note that closed it: the answer, or osFoundry's
	// notice that it expired.
	ClosedBy *int64
	// ExpiresAt is when it expires if nobody answers.
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Open reports whether the question still waits for an answer.
func (q *Question) Open() bool { return q.State == QuestionOpen }

// QuestionAsk is what makes an agent's note a question (AgentNote.Question).
type QuestionAsk struct {
	Options []string
	// Urgency is UrgencyNormal or UrgencyBlocking; empty means normal.
	Urgency string
}

func (q *QuestionAsk) validate(text string) error {
	if q.Urgency == "" {
		q.Urgency = UrgencyNormal
	}
	switch n := utf8.RuneCountInString(text); {
	case strings.TrimSpace(text) == "":
		return &FieldError{"question", "write the question"}
	case n > MaxQuestionLen:
		return &FieldError{"question", fmt.Sprintf("use at most %d characters", MaxQuestionLen)}
	case len(q.Options) > MaxOptions:
		return &FieldError{"options", fmt.Sprintf("offer at most %d options", MaxOptions)}
	case !slices.Contains(Urgencies, q.Urgency):
		return &FieldError{"urgency", "use normal or blocking"}
	}
	if !oneLine(QuestionFirstLine(text)) {
		return &FieldError{"question", "its first line (the subject of the owners' mail) must be text without control characters or direction overrides; put details on the lines after it"}
	}
	for i, o := range q.Options {
		switch {
		case strings.TrimSpace(o) == "":
			return &FieldError{"options", "an option is blank"}
		case !oneLine(o):
			return &FieldError{"options", "an option must be one line of text, without line breaks, tabs, other control characters or direction overrides"}
		case utf8.RuneCountInString(o) > MaxOptionLen:
			return &FieldError{"options", fmt.Sprintf("use at most %d characters per option", MaxOptionLen)}
		case slices.Contains(q.Options[:i], o):
			return &FieldError{"options", fmt.Sprintf("%q is offered twice", o)}
		}
	}
	if q.Options == nil {
		q.Options = []string{}
	}
	return nil
}

// QuestionFirstLine is the first line of a question's text, what the
// subject of its mail says: up to its first line break.
func QuestionFirstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return strings.TrimSuffix(line, "\r")
}

// ErrQuestionKeyReused means an idempotency key was sent again with another session, question,
// options or urgency.
var ErrQuestionKeyReused = &FieldError{"idempotency_key", "already used for a different question; send the same session, question, options and urgency to retry, or use a new key for a new question"}

func questionColumns(a string) string {
	return a + `.note_id, ` + a + `.workspace_id, ` + a + `.session_id, ` + a + `.connection_id, ` + a + `.options, ` +
		a + `.urgency, ` + a + `.state, ` + a + `.answer, ` + a + `.answered_by_name, ` + a + `.answered_by, ` +
		a + `.closed_at, ` + a + `.closing_note_id, ` + a + `.expires_at, ` + a + `.created_at`
}

type nullableQuestion struct {
	id, workspaceID, sessionID, connectionID *int64
	options                                  []string
	urgency, state, answer, answeredBy       *string
	answeredByID, closedBy                   *int64
	closedAt, expiresAt, createdAt           *time.Time
}

func (q *nullableQuestion) targets() []any {
	return []any{&q.id, &q.workspaceID, &q.sessionID, &q.connectionID, &q.options, &q.urgency, &q.state, &q.answer,
		&q.answeredBy, &q.answeredByID, &q.closedAt, &q.closedBy, &q.expiresAt, &q.createdAt}
}

func (q *nullableQuestion) question() *Question {
	if q.id == nil {
		return nil
	}
	out := &Question{ID: *q.id, WorkspaceID: *q.workspaceID, SessionID: *q.sessionID, ConnectionID: *q.connectionID,
		Options: q.options, Urgency: *q.urgency, State: *q.state, Answer: derefOr(q.answer, ""),
		AnsweredBy: derefOr(q.answeredBy, ""), AnsweredByID: q.answeredByID, ClosedAt: q.closedAt, ClosedBy: q.closedBy,
		ExpiresAt: *q.expiresAt, CreatedAt: *q.createdAt}
	if out.Options == nil {
		out.Options = []string{}
	}
	return out
}

var questionSelect = `SELECT n.body, ` + questionColumns("q")

func scanQuestion(row pgx.Row) (*Question, error) {
	var text string
	var q nullableQuestion
	if err := row.Scan(append([]any{&text}, q.targets()...)...); err != nil {
		return nil, err
	}
	out := q.question()
	if out == nil {
		return nil, pgx.ErrNoRows
	}
	out.Text = text
	return out, nil
}

var agentQuestionSQL = agentNoteWriteSQL(`
	question AS (
		INSERT INTO questions (note_id, workspace_id, session_id, connection_id, options, urgency, due_at, expires_at)
		SELECT note.id, note.workspace_id, note.session_id, note.sender_connection_id, $13::text[], $14::text,
			now() + make_interval(secs => $15::float8 * CASE WHEN $14::text = 'blocking' THEN p.question_blocking_minutes ELSE p.question_normal_minutes END),
			now() + make_interval(secs => $15::float8 * 60 * p.question_expiry_hours)
		FROM note JOIN locked ON locked.id = note.session_id JOIN projects p ON p.id = locked.project_id
	)`)

// AgentQuestion is the input of AskQuestion: ask_owner's arguments as the
// caller's connection asks them.
type AgentQuestion struct {
	WorkspaceID    int64
	ConnectionID   int64
	SessionType    string
	SessionID      string
	Text           string
	Options        []string
	Urgency        string
	IdempotencyKey string
}

// AskQuestion posts the connection's question to its session's owners, with the same rules and
// idempotency as PostAgentNote.
func (s *Store) AskQuestion(ctx context.Context, in AgentQuestion) (q *Question, duplicate bool, err error) {
	n, dup, err := s.PostAgentNote(ctx, AgentNote{WorkspaceID: in.WorkspaceID, ConnectionID: in.ConnectionID,
		SessionType: in.SessionType, SessionID: in.SessionID, Body: in.Text, IdempotencyKey: in.IdempotencyKey,
		Question: &QuestionAsk{Options: in.Options, Urgency: in.Urgency}})
	if err != nil {
		return nil, false, err
	}
	q, err = s.AgentQuestion(ctx, in.WorkspaceID, in.ConnectionID, n.ID)
	if err != nil {
		return nil, false, err
	}
	return q, dup, nil
}

func (s *Store) sameQuestion(ctx context.Context, id int64, ask *QuestionAsk) (bool, error) {
	var options []string
	var urgency string
	if err := s.pool.QueryRow(ctx, `SELECT options, urgency FROM questions WHERE note_id = $1`, id).Scan(&options, &urgency); err != nil {
		return false, err
	}
	return slices.Equal(options, ask.Options) && urgency == ask.Urgency, nil
}

// AgentQuestion returns a question the connection asked, as it stands.
func (s *Store) AgentQuestion(ctx context.Context, workspaceID, connectionID, id int64) (*Question, error) {
	q, err := scanQuestion(s.pool.QueryRow(ctx, questionSelect+`
		FROM questions q JOIN notes n ON n.id = q.note_id
		WHERE q.note_id = $1 AND q.workspace_id = $2 AND q.connection_id = $3`, id, workspaceID, connectionID))
	if err != nil {
		return nil, wrap("agent question", err)
	}
	return q, nil
}

// QuestionsOf returns the questions among ids, in the workspace, by id.
func (s *Store) QuestionsOf(ctx context.Context, workspaceID int64, ids []int64) (map[int64]*Question, error) {
	out := map[int64]*Question{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, questionSelect+`
		FROM questions q JOIN notes n ON n.id = q.note_id
		WHERE q.note_id = ANY($1) AND q.workspace_id = $2`, ids, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("store: questions of: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		q, err := scanQuestion(rows)
		if err != nil {
			return nil, fmt.Errorf("store: questions of: %w", err)
		}
		out[q.ID] = q
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: questions of: %w", err)
	}
	return out, nil
}

// OwnerQuestion returns a question of the owner's workspace, with the
// session and project it belongs to.
func (s *Store) OwnerQuestion(ctx context.Context, workspaceID, id int64) (*Question, error) {
	q, err := scanQuestion(s.pool.QueryRow(ctx, questionSelect+`
		FROM questions q JOIN notes n ON n.id = q.note_id
		WHERE q.note_id = $1 AND q.workspace_id = $2`, id, workspaceID))
	if err != nil {
		return nil, wrap("owner question", err)
	}
	return q, nil
}

// OpenQuestions returns the open questions of the workspace (of one project when projectID is not
// 0, of one session when sessionID is not 0), newest first, at most limit, as the notes they are.
func (s *Store) OpenQuestions(ctx context.Context, workspaceID, projectID, sessionID int64, limit int) ([]InboxNote, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+inboxColumns+`, false
		FROM questions oq
		JOIN notes n ON n.id = oq.note_id `+listedJoin+`
		JOIN sessions s ON s.id = n.session_id
		JOIN projects p ON p.id = s.project_id
		WHERE oq.workspace_id = $1 AND oq.state = 'open' AND ($2::bigint = 0 OR s.project_id = $2) AND ($3::bigint = 0 OR s.id = $3)
		ORDER BY oq.workspace_id, oq.note_id DESC LIMIT $4`, workspaceID, projectID, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: open questions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (InboxNote, error) {
		var in InboxNote
		n, err := scanListedNote(r, &in.SessionTitle, &in.ProjectID, &in.ProjectName, &in.Unread)
		if err == nil {
			in.Note = *n
		}
		return in, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: open questions: %w", err)
	}
	return out, nil
}
