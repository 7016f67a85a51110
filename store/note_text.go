package store

import (
	"fmt"
	"unicode/utf8"
)

// checkNoteText checks what every note says, whoever writes it (an agent's
// note, reply or question, an owner's note): a subject of at most
// MaxSubjectLen characters and a body of at most MaxBodyLen. What a blank
// note is stays each writer's rule (ErrBlankNote, OwnerNote.Validate).
func checkNoteText(subject, body string) error {
	if n := utf8.RuneCountInString(subject); n > MaxSubjectLen {
		return &FieldError{"subject", fmt.Sprintf("use at most %d characters (now %d)", MaxSubjectLen, n)}
	}
	if n := utf8.RuneCountInString(body); n > MaxBodyLen {
		return &FieldError{"body", fmt.Sprintf("use at most %d characters (now %d)", MaxBodyLen, n)}
	}
	return nil
}
