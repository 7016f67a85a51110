package store

import (
	"testing"
	"time"
)

// TestTopicPayloads pins the bytes of every payload on the wire, which
// replicas of other versions read too, and how each is read back.
func TestTopicPayloads(t *testing.T) {
	sent := time.UnixMicro(1764582000123456)
	for _, c := range []struct{ got, want string }{
		{NoteTopic.encode(NoteNotice{SessionID: 12, NoteID: 345, Sent: sent}), "12:345:1764582000123456"},
		{ReceiptTopic.encode(NoteRef{SessionID: 12, NoteID: 345}), "12:345"},
		{ReadsTopic.encode(7), "7"},
		{PresenceTopic.encode(9), "9"},
		{SignOutTopic.encode(42), "42"},
		{WebhookTopic.encode(struct{}{}), ""},
	} {
		if c.got != c.want {
			t.Errorf("payload %q, want %q", c.got, c.want)
		}
	}
	for p, want := range map[string]NoteNotice{
		"12:345:1764582000123456": {SessionID: 12, NoteID: 345, Sent: sent},
		"12:345":                  {SessionID: 12, NoteID: 345}, // an older replica's
	} {
		if got, ok := NoteTopic.decode(p); !ok || got.SessionID != want.SessionID || got.NoteID != want.NoteID || !got.Sent.Equal(want.Sent) {
			t.Errorf("decode %q: %+v %v, want %+v", p, got, ok, want)
		}
	}
	for _, p := range []string{"", "12", "12:x", "12:345:x", "1:2:3:4"} {
		if _, ok := NoteTopic.decode(p); ok {
			t.Errorf("decode %q: read, want refused", p)
		}
	}
	if r, ok := ReceiptTopic.decode("12:345"); !ok || r != (NoteRef{12, 345}) {
		t.Errorf("receipt: %+v %v", r, ok)
	}
	if _, ok := PresenceTopic.decode("x"); ok {
		t.Error("presence payload x read")
	}
}
