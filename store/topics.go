package store

import (
	"strconv"
	"strings"
	"time"
)

// The NOTIFY channels, each heard by every replica's one Listener; their payloads carry ids only, and
// each channel's Topic below says what it means.
const (
	NotesChannel     = "osfoundry_notes"
	ReceiptsChannel  = "osfoundry_receipts"
	ReadsChannel     = "osfoundry_reads"
	PresenceChannel  = "osfoundry_presence"
	SignOutChannel   = "osfoundry_signouts"
	WebhooksChannel  = "osfoundry_webhooks"
	QuestionsChannel = "osfoundry_questions"
	TimersChannel    = "osfoundry_timers"
	EmailChannel     = "osfoundry_mail"
	ApprovalsChannel = "osfoundry_approvals"
	PushChannel      = "osfoundry_push"
	PeopleChannel    = "osfoundry_people"
)

// Topic is one NOTIFY channel and the codec of its payload; T is what a notification on it says.
type Topic[T any] struct {
	channel string
	encode  func(T) string
	decode  func(string) (T, bool)
}

// Channel is the topic's NOTIFY channel.
func (t Topic[T]) Channel() string { return t.channel }

func (t Topic[T]) notification(v T) notification {
	return notification{t.channel, t.encode(v)}
}

// NoteNotice is a notification of a new note.
type NoteNotice struct {
	SessionID, NoteID int64
	// Sent is when the writer queued the notification, right after the note committed (the writing
	// replica's clock), from which each replica measures how late it heard of the note.
	Sent time.Time
}

// NoteRef names a note of a session: the payload of ReceiptTopic.
type NoteRef struct {
	SessionID, NoteID int64
}

// The topics of the channels above, with what each payload holds.
var (
	// NoteTopic: a new note, "<session id>:<note id>:<sent>" (Unix microseconds).
	NoteTopic = Topic[NoteNotice]{NotesChannel, encodeNoteNotice, decodeNoteNotice}
	// ReceiptTopic: an agent read an owner's note, "<session id>:<note id>".
	ReceiptTopic = Topic[NoteRef]{ReceiptsChannel, encodeNoteRef, decodeNoteRef}
	// ReadsTopic: an owner's read mark moved, the owner id (sent by MarkMailRead's statement).
	ReadsTopic = Topic[int64]{ReadsChannel, encodeID, decodeID}
	// PresenceTopic: a presence sidebar of the workspace may have changed, the workspace id.
	PresenceTopic = Topic[int64]{PresenceChannel, encodeID, decodeID}
	// SignOutTopic: a sign-in ended, the sign-in's row id (never its token).
	SignOutTopic = Topic[int64]{SignOutChannel, encodeID, decodeID}
	// WebhookTopic: empty; wakes the webhook senders after deliveries were queued.
	WebhookTopic = Topic[struct{}]{WebhooksChannel, encodeEmpty, decodeEmpty}
	// QuestionTopic: a question was answered or expired, "<session id>:<question id>".
	QuestionTopic = Topic[NoteRef]{QuestionsChannel, encodeNoteRef, decodeNoteRef}
	// TimerTopic: empty; wakes the question timers after a question was asked.
	TimerTopic = Topic[struct{}]{TimersChannel, encodeEmpty, decodeEmpty}
	// EmailTopic: empty; wakes the email senders after messages were queued.
	EmailTopic = Topic[struct{}]{EmailChannel, encodeEmpty, decodeEmpty}
	// ApprovalTopic: an approval was asked or decided, its id.
	ApprovalTopic = Topic[int64]{ApprovalsChannel, encodeID, decodeID}
	// PushTopic: empty; wakes the push senders (sent by the push triggers).
	PushTopic = Topic[struct{}]{PushChannel, encodeEmpty, decodeEmpty}
	// PersonTopic: a person's role changed or they were removed, the owner id.
	PersonTopic = Topic[int64]{PeopleChannel, encodeID, decodeID}
)

func encodeEmpty(struct{}) string { return "" }

func decodeEmpty(string) (struct{}, bool) { return struct{}{}, true }

func encodeID(id int64) string { return strconv.FormatInt(id, 10) }

func decodeID(p string) (int64, bool) {
	id, err := strconv.ParseInt(p, 10, 64)
	return id, err == nil
}

func encodeNoteRef(r NoteRef) string {
	return strconv.FormatInt(r.SessionID, 10) + ":" + strconv.FormatInt(r.NoteID, 10)
}

func decodeNoteRef(p string) (NoteRef, bool) {
	a, b, found := strings.Cut(p, ":")
	if !found {
		return NoteRef{}, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	n, err2 := strconv.ParseInt(b, 10, 64)
	return NoteRef{s, n}, err1 == nil && err2 == nil
}

func encodeNoteNotice(n NoteNotice) string {
	return encodeNoteRef(NoteRef{n.SessionID, n.NoteID}) + ":" + strconv.FormatInt(n.Sent.UnixMicro(), 10)
}

func decodeNoteNotice(p string) (NoteNotice, bool) {
	ids, sent := p, time.Time{}
	if strings.Count(p, ":") >= 2 {
		i := strings.LastIndexByte(p, ':')
		us, err := strconv.ParseInt(p[i+1:], 10, 64)
		if err != nil {
			return NoteNotice{}, false
		}
		ids, sent = p[:i], time.UnixMicro(us)
	}
	r, ok := decodeNoteRef(ids)
	return NoteNotice{SessionID: r.SessionID, NoteID: r.NoteID, Sent: sent}, ok
}
