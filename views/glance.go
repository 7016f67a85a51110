package views

import "github.com/osfoundry/osfoundry/store"

// glanceLine is the body's first line, unless it is the row's title already.
func glanceLine(n store.Note) string {
	line := FirstLine(n.Body, 240)
	if line == threadTitle(n) {
		return ""
	}
	return line
}
