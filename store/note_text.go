package store

import (
	"fmt"
	"unicode/utf8"
)

func checkNoteText(subject, body string) error {
	if n := utf8.RuneCountInString(subject); n > MaxSubjectLen {
		return &FieldError{"subject", fmt.Sprintf("use at most %d characters (now %d)", MaxSubjectLen, n)}
	}
	if n := utf8.RuneCountInString(body); n > MaxBodyLen {
		return &FieldError{"body", fmt.Sprintf("use at most %d characters (now %d)", MaxBodyLen, n)}
	}
	return nil
}
