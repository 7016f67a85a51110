package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/osfoundry/osfoundry/store"
)

// Tool input schemas are composed from the pieces in this file, so that each
// rule (the session types, a length limit, a page size) is written once, in
// the store or here, and every tool that takes it says the same thing.
// testdata/tools_list.json shows the bytes that result.

// schema is the JSON Schema of one argument. Its fields marshal in the order
// they are declared.
type schema struct {
	Type      any      `json:"type,omitempty"` // "string", "integer", "array", or ["string","null"]
	Enum      []string `json:"enum,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength int      `json:"maxLength,omitempty"`
	Minimum   *int     `json:"minimum,omitempty"`
	Maximum   int      `json:"maximum,omitempty"`
	Items     *schema  `json:"items,omitempty"`
	MaxItems  int      `json:"maxItems,omitempty"`
	// Default is the value an omitted argument takes (nil: none said).
	Default any `json:"default,omitempty"`
}

// property is one named argument of a tool.
type property struct {
	name   string
	schema schema
}

// object is a tool's input schema: an object closed with
// additionalProperties false, whose properties keep the order given.
type object struct {
	properties []property
	required   []string
}

// MarshalJSON writes {"type":"object","properties":{…},"required":[…],"additionalProperties":false},
// leaving out required when nothing is.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range o.properties {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(p.name)
		if err != nil {
			return nil, err
		}
		s, err := json.Marshal(p.schema)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(s)
	}
	b.WriteByte('}')
	if len(o.required) > 0 {
		r, err := json.Marshal(o.required)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes(), nil
}

// raw is the schema as the tool definition carries it.
func (o object) raw() json.RawMessage {
	b, err := json.Marshal(o)
	if err != nil {
		panic("mcp: input schema: " + err.Error())
	}
	return b
}

// The pieces.

func text() schema { return schema{Type: "string"} }

func textMax(n int) schema { return schema{Type: "string", MaxLength: n} }

// nullableTextMax is a string or null: null clears the field.
func nullableTextMax(n int) schema { return schema{Type: []string{"string", "null"}, MaxLength: n} }

// textBetween is a string of min to max characters.
func textBetween(min, max int) schema {
	return schema{Type: "string", MinLength: new(min), MaxLength: max}
}

func integerMin(min int) schema { return schema{Type: "integer", Minimum: new(min)} }

// integerBetween is an integer from min to max, def when omitted.
func integerBetween(min, max, def int) schema {
	return schema{Type: "integer", Minimum: new(min), Maximum: max, Default: def}
}

// list is an array of at most max items of the item schema.
func list(item schema, max int) schema { return schema{Type: "array", Items: &item, MaxItems: max} }

// oneOf is the enum of values, def when omitted.
func oneOf(values []string, def string) schema { return schema{Enum: values, Default: def} }

// pageLimit is the limit argument of a paged tool: 1 to max, def when omitted.
func pageLimit(max, def int) schema {
	return schema{Type: "integer", Minimum: new(1), Maximum: max, Default: def}
}

// sessionType is the enum of store.SessionTypes.
func sessionType() schema { return schema{Enum: store.SessionTypes} }

// sessionProps is how a tool names a session: its type and its id, under the
// argument names the tool uses.
func sessionProps(typeName, idName string) []property {
	return []property{{typeName, sessionType()}, {idName, text()}}
}

// noteProps are the fields of a note an agent writes, the same wherever it
// writes one (post_session_note, reply_to_sender): the store's subject and
// body limits, and its idempotency key, whose 1 to
// store.MaxIdempotencyKeyLen characters the store checks.
func noteProps() []property {
	return []property{
		{"subject", textMax(store.MaxSubjectLen)},
		{"body", textMax(store.MaxBodyLen)},
		idempotencyKey,
	}
}

// idempotencyKey is the key of every tool that writes a note or a question,
// one key space per connection.
var idempotencyKey = property{"idempotency_key", text()}

// noteID is a note's id as an argument (before_id, in_reply_to).
func noteID() schema { return integerMin(1) }

// noteSchema is the input of a tool that writes a note in a session: the
// session, then extra (reply_to_sender's recipient), then the note's
// fields, all required.
func noteSchema(extra ...property) object {
	props := append(append(sessionProps("session_type", "session_id"), extra...), noteProps()...)
	o := object{properties: props}
	for _, p := range props {
		o.required = append(o.required, p.name)
	}
	return o
}

// optional is the schema with props added after its own, not required.
func (o object) optional(props ...property) object {
	o.properties = append(append([]property(nil), o.properties...), props...)
	return o
}

// noArgs is the schema of a tool without arguments.
var noArgs = object{}
