package live

import (
	"bytes"
	"strconv"
	"strings"
)

// Heartbeat is the comment line sent on idle streams, so that proxies and
// load balancers do not close them and dead clients are noticed.
var Heartbeat = []byte(": heartbeat\n\n")

// Frame frames one server-sent event. id (when not 0) becomes the browser's
// Last-Event-ID; only note events carry one. Every line of data becomes a
// "data:" line, so data may hold any text (a line break inside a note body
// comes back as "\n").
func Frame(name string, id int64, data []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(data) + 64)
	if id > 0 {
		b.WriteString("id: ")
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte('\n')
	}
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteByte('\n')
	text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
