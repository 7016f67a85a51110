package mcp

// readExact reads, in one pass, a plain tools/call or initialize: its known
// members each once, names in printable ASCII without escapes. Such a
// message decodes the same whichever decoder reads it; ok is false for any
// other.
func readExact(doc []byte) (m message, ok bool) {
	var seen, params uint8
	s := scanner{b: doc}
	ok = s.object(func(key, val []byte) bool {
		bit, keep := uint8(0), true
		switch string(key) {
		case `"jsonrpc"`:
			bit, m.version = 1, val
		case `"id"`:
			bit, m.ID = 2, val
		case `"method"`:
			bit = 4
			m.Method, keep = plainString(val)
		case `"params"`:
			bit, m.params = 8, val
			p := scanner{b: val}
			keep = p.object(func(key, val []byte) bool {
				var pbit uint8
				keep := true
				switch string(key) {
				case `"name"`:
					pbit = 1
					m.Params.Name, keep = plainString(val)
				case `"arguments"`:
					pbit, m.Params.Arguments = 2, val
				case `"protocolVersion"`:
					pbit = 4
					m.Params.ProtocolVersion, keep = plainString(val)
				case `"capabilities"`:
					pbit, m.Params.Capabilities = 8, val
				case `"clientInfo"`:
					pbit, m.Params.ClientInfo = 16, val
				default:
					return false
				}
				if params&pbit != 0 {
					return false
				}
				params |= pbit
				return keep
			}) && p.end()
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return keep
	}) && s.end()
	m.exact = ok
	return m, ok
}

func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	for _, c := range inner {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return "", false
		}
	}
	return string(inner), true
}

// scanner walks JSON already known to be valid.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// object calls fn with each member's raw key (quoted) and value, and reports
// whether the value there is an object and fn accepted every member.
func (s *scanner) object(fn func(key, val []byte) bool) bool {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	for {
		s.space()
		switch s.b[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			s.space()
		}
		key := s.value()
		s.space()
		s.i++ // the colon
		s.space()
		if !fn(key, s.value()) {
			return false
		}
	}
}

func (s *scanner) value() []byte {
	start := s.i
	switch s.b[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return s.b[start:s.i]
			}
			s.i++
		}
	}
	return s.b[start:s.i]
}

func (s *scanner) skipString() {
	for s.i++; s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			s.i++
		}
	}
	s.i++
}
