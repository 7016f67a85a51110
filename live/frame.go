package live

import (
	"bytes"
	"strconv"
	"strings"
)

// Heartbeat keeps proxies from closing idle streams and finds dead clients.
var Heartbeat = []byte(": heartbeat\n\n")

// Frame frames one server-sent event; id (when not 0) becomes the browser's
// Last-Event-ID, and each line of data a "data:" line.
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
