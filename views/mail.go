package views

import (
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/osfoundry/osfoundry/store"
)

// Long bodies show a preview and a "show more" disclosure.
const (
	collapseRunes = 700
	collapseLines = 12
	previewRunes  = 420
	previewLines  = 7
)

// bodyPreview returns the start of a long body to show collapsed, and false
// when the body is short enough to show whole.
func bodyPreview(body string) (string, bool) {
	if utf8.RuneCountInString(body) <= collapseRunes && strings.Count(body, "\n") < collapseLines {
		return body, false
	}
	cut := body
	if lines := strings.SplitAfterN(cut, "\n", previewLines+1); len(lines) > previewLines {
		cut = strings.Join(lines[:previewLines], "")
	}
	if utf8.RuneCountInString(cut) > previewRunes {
		cut = string([]rune(cut)[:previewRunes])
		if i := strings.LastIndexAny(cut, " \n"); i > previewRunes/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " \n") + "…", true
}

// ReplySubject prefixes "Re: " once (an empty subject stays empty).
func ReplySubject(subject string) string {
	if subject == "" || strings.HasPrefix(strings.ToLower(subject), "re:") {
		return subject
	}
	s := "Re: " + subject
	if utf8.RuneCountInString(s) > store.MaxSubjectLen {
		s = string([]rune(s)[:store.MaxSubjectLen])
	}
	return s
}

// hasReceipts reports whether a note shows read receipts: an owner's note
// agents read (not an analysis note, which they never see).
func hasReceipts(n store.Note) bool {
	return n.SenderKind == store.SenderOwner && n.MessageType != store.MessageAnalysis
}

// ReadBy is the ReceiptsLine of a note's receipts, or nil while nobody has
// read it: the line NoteReceipts shows. A live stream's receipt event renders
// NoteReceipts(noteID, true, ReadBy(store.NoteReceipts(…, []int64{noteID}))).
func ReadBy(receipts []store.Receipt) templ.Component {
	if len(receipts) == 0 {
		return nil
	}
	return ReceiptsLine(receipts)
}

// ReceiptsUpdate is what a mail poll brings of read receipts: the lines that
// changed since the page's cursor and the cursor to send next.
type ReceiptsUpdate struct {
	Lines  []NoteReceiptsLine
	Cursor int64
}

// NoteReceiptsLine is the receipts of one note.
type NoteReceiptsLine struct {
	NoteID   int64
	Receipts []store.Receipt
}

// GroupReceipts groups receipts ordered by note into one line per note, in
// that order.
func GroupReceipts(receipts []store.Receipt) []NoteReceiptsLine {
	var out []NoteReceiptsLine
	for _, r := range receipts {
		if len(out) == 0 || out[len(out)-1].NoteID != r.NoteID {
			out = append(out, NoteReceiptsLine{NoteID: r.NoteID})
		}
		out[len(out)-1].Receipts = append(out[len(out)-1].Receipts, r)
	}
	return out
}

// deliveredTo names the agent of a delivery: its handle, or its name before
// it claimed one.
func deliveredTo(rc store.Receipt) string {
	if rc.Handle != "" {
		return "@" + rc.Handle
	}
	return rc.Reader
}
