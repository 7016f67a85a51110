package store

import (
	"strconv"
	"strings"
	"time"
)

// The NOTIFY channels, in one place: every replica's Listener hears all of them on its one
// connection.
const (
	// NotesChannel announces a new note: "<session id>:<note id>:<sent>".
	NotesChannel = "osfoundry_notes"
	// ReceiptsChannel says an owner's note got a read receipt (an agent read it).
	ReceiptsChannel = "osfoundry_receipts"
	// ReadsChannel says an owner's read mark in a session moved forward, so their unread counts
	// changed.
	ReadsChannel = "osfoundry_reads"
	// PresenceChannel says what a presence sidebar shows may have changed in a workspace (a status
	// set or cleared, a profile claimed, a connection revoked).
	PresenceChannel = "osfoundry_presence"
	// SignOutChannel says a sign-in ended (signed out, ended from the account page, or by a
	// password change).
	SignOutChannel = "osfoundry_signouts"
	// WebhooksChannel wakes the webhook senders when deliveries are queued;
	// the payload is empty.
	WebhooksChannel = "osfoundry_webhooks"
	// QuestionsChannel says a question closed, answered or expired.
	QuestionsChannel = "osfoundry_questions"
	// TimersChannel wakes the question timers of every replica when a question was asked (its
	// notice may be due at once).
	TimersChannel = "osfoundry_timers"
	// EmailChannel wakes the mail senders when messages are queued; the
	// payload is empty.
	EmailChannel = "osfoundry_mail"
	// ApprovalsChannel says an approval was asked or decided (allowed, denied, expired, answered at
	// the terminal).
	ApprovalsChannel = "osfoundry_approvals"
	// PushChannel wakes the push senders when pushes are queued (the push_question and push_reply
	// triggers send it).
	PushChannel = "osfoundry_push"
	// PeopleChannel says a person's role changed or they were removed.
	PeopleChannel = "osfoundry_people"
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

// The topics of the channels above.
var (
	// NoteTopic: "<session id>:<note id>:<sent>", sent in Unix microseconds.
	NoteTopic = Topic[NoteNotice]{NotesChannel, encodeNoteNotice, decodeNoteNotice}
	// ReceiptTopic: "<session id>:<note id>"; readAgentMailSQL builds it in
	// the statement that records the receipt.
	ReceiptTopic = Topic[NoteRef]{ReceiptsChannel, encodeNoteRef, decodeNoteRef}
	// ReadsTopic: the owner id; MarkMailRead sends it in the statement that
	// moves the mark.
	ReadsTopic = Topic[int64]{ReadsChannel, encodeID, decodeID}
	// PresenceTopic: the workspace id.
	PresenceTopic = Topic[int64]{PresenceChannel, encodeID, decodeID}
	// SignOutTopic: the sign-in id.
	SignOutTopic = Topic[int64]{SignOutChannel, encodeID, decodeID}
	// WebhookTopic: empty; the statements that queue a delivery send it (SetWebhookEndpointEnabled,
	// QueueWebhookTest) or the note's writer does, after its commit.
	WebhookTopic = Topic[struct{}]{WebhooksChannel, encodeEmpty, decodeEmpty}
	// QuestionTopic: "<session id>:<question id>", sent after the answer
	// or the expiry committed.
	QuestionTopic = Topic[NoteRef]{QuestionsChannel, encodeNoteRef, decodeNoteRef}
	// TimerTopic: empty; sent after a question was asked.
	TimerTopic = Topic[struct{}]{TimersChannel, encodeEmpty, decodeEmpty}
	// EmailTopic: empty; sent after messages were queued.
	EmailTopic = Topic[struct{}]{EmailChannel, encodeEmpty, decodeEmpty}
	// ApprovalTopic: the approval id, sent after the statement that changed it.
	ApprovalTopic = Topic[int64]{ApprovalsChannel, encodeID, decodeID}
	// PushTopic: empty; sent by the statements that queue pushes.
	PushTopic = Topic[struct{}]{PushChannel, encodeEmpty, decodeEmpty}
	// PersonTopic: the owner id; sent after a role change or a removal.
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
