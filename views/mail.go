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

// bodyPreview is a long body's start, and false for a short one.
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

// hasReceipts: an owner's note agents read (analysis notes they never see).
func hasReceipts(n store.Note) bool {
	return n.SenderKind == store.SenderOwner && n.MessageType != store.MessageAnalysis
}

// ReadBy is the line NoteReceipts shows, nil while nobody has read the note.
func ReadBy(receipts []store.Receipt) templ.Component {
	if len(receipts) == 0 {
		return nil
	}
	return ReceiptsLine(receipts)
}

// ReceiptsUpdate is the receipt lines changed since the page's cursor, and the next cursor.
type ReceiptsUpdate struct {
	Lines  []NoteReceiptsLine
	Cursor int64
}

// NoteReceiptsLine is the receipts of one note.
type NoteReceiptsLine struct {
	NoteID   int64
	Receipts []store.Receipt
}

// GroupReceipts makes one line per note, in order.
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

// deliveredTo is the agent's handle, or its name before it claimed one.
func deliveredTo(rc store.Receipt) string {
	if rc.Handle != "" {
		return "@" + rc.Handle
	}
	return rc.Reader
}
