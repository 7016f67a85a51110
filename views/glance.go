package views

import "github.com/osfoundry/osfoundry/store"

// glanceLine is what a compact row shows after the subject: the body's
// first line without markup, unless it is the row's title already (a note
// without a subject, a question), so no text shows twice.
func glanceLine(n store.Note) string {
	line := FirstLine(n.Body, 240)
	if line == threadTitle(n) {
		return ""
	}
	return line
}
