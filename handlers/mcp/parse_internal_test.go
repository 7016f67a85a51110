package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// exactBodies are messages readExact reads itself, and messages it must
// leave to encoding/json.
var exactBodies = []struct {
	body  string
	exact bool
}{
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"set_status","arguments":{"task":"a \"b\" \\ c","n":[1,{"x":"}"}]}}}`, true},
	{` { "id" : "a-1" , "params" : { "arguments" : { } , "name" : "x" } , "method" : "tools/call" , "jsonrpc" : "2.0" } `, true},
	{`{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"list_sessions"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, true},
	{`{"jsonrpc":"2.0","id":null,"method":"ping","params":{}}`, true},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{`{}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}`, true},
	{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"x","arguments":[]}}`, true},

	{`{"jsonrpc":"2.0","id":7,"Method":"tools/call","method":"tools/list"}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","method":"tools/list"}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","extra":1}`, false},
	{`{"\u006dethod":"tools/call","id":1}`, false},
	{`{"method":"tools\/call","id":1}`, false},
	{`{"method":"t\u00e9","id":1}`, false},
	{`{"method":null,"id":1}`, false},
	{`{"method":5,"id":1}`, false},
	{`{"id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p"}}}`, false},
	{`{"id":1,"method":"tools/call","params":{"name":"x","name":"y"}}`, false},
	{`{"id":1,"method":"tools/call","params":null}`, false},
	{`{"id":1,"method":"tools/call","params":{"name":null}}`, false},
	{`{"id":1,"method":"tools/call","params":{"name":"paramſ"}}`, false},
	{`{"id":1,"paramſ":{"name":"x"}}`, false},
	{`null`, false},
	{`"x"`, false},
}

// TestReadExactDecodesAsEncodingJSON: a message readExact reads itself
// decodes to what encoding/json makes of it, so that reading a body once
// changes nothing; the others are left to encoding/json.
func TestReadExactDecodesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range exactBodies {
		m, ok := readExact(bytes.TrimLeft([]byte(c.body), " "))
		if ok != c.exact {
			t.Errorf("%s: exact %v, want %v", c.body, ok, c.exact)
		}
		if ok {
			assertDecodesAsEncodingJSON(t, []byte(c.body), m)
		}
	}
}

func assertDecodesAsEncodingJSON(t *testing.T, body []byte, got message) {
	t.Helper()
	var want message
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatalf("%s: read exactly, but encoding/json refuses it: %v", body, err)
	}
	if string(got.ID) != string(want.ID) || got.Method != want.Method || !reflect.DeepEqual(got.Params, want.Params) {
		t.Fatalf("%s:\nread  %+v\nwant  %+v", body, got, want)
	}
}

// FuzzReadExact: whatever the body, a message readExact accepts decodes as
// encoding/json decodes it, and decodeMessages never panics.
func FuzzReadExact(f *testing.F) {
	for _, c := range exactBodies {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _ := decodeMessages(body)
		if len(msgs) == 1 && msgs[0].exact {
			assertDecodesAsEncodingJSON(t, body, msgs[0])
		}
	})
}
