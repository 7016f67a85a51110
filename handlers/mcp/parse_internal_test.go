package mcp

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// exactBodies are messages readExact reads itself, and messages it must
// leave to sdkUnmarshal.
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

// TestReadExactDecodesAsTheSDK: a message readExact reads itself decodes to
// what the SDK's rules make of it, so that reading a body once changes
// nothing; the others are left to sdkUnmarshal.
func TestReadExactDecodesAsTheSDK(t *testing.T) {
	t.Parallel()
	for _, c := range exactBodies {
		m, ok := readExact(bytes.TrimLeft([]byte(c.body), " "))
		if ok != c.exact {
			t.Errorf("%s: exact %v, want %v", c.body, ok, c.exact)
		}
		if ok {
			assertDecodesAsTheSDK(t, []byte(c.body), m)
		}
	}
}

func assertDecodesAsTheSDK(t *testing.T, body []byte, got message) {
	t.Helper()
	var want message
	if err := sdkUnmarshal(body, &want); err != nil {
		t.Fatalf("%s: read exactly, but the SDK's rules refuse it: %v", body, err)
	}
	if string(got.ID) != string(want.ID) || got.Method != want.Method || !reflect.DeepEqual(got.Params, want.Params) {
		t.Fatalf("%s:\nread  %+v\nwant  %+v", body, got, want)
	}
}

// FuzzReadExact: whatever the body, a message readExact accepts decodes as
// the SDK's rules decode it, and decodeMessages never panics.
func FuzzReadExact(f *testing.F) {
	for _, c := range exactBodies {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _, _ := decodeMessages(body)
		if len(msgs) == 1 && msgs[0].exact {
			assertDecodesAsTheSDK(t, body, msgs[0])
		}
	})
}

// TestRepeatedMembersAreRefused: a body in which an object names a member
// twice, or two members whose names differ only in case (at any depth, in a
// batch too), yields no messages but an error naming both; distinct names,
// and repeated names in different objects or in strings, pass.
func TestRepeatedMembersAreRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body, err string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post_session_note","Name":"list_agents"}}`,
			`request JSON has the members "name" and "Name", whose names differ only in case`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post_session_note","name":"list_agents"}}`,
			`request JSON has the member "name" twice`},
		{`{"jsonrpc":"2.0","id":7,"Method":"tools/list","method":"tools/call"}`, `"Method" and "method"`},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","\u006dethod":"tools/list"}`, `the member "method" twice`},
		{`{"id":1,"method":"tools/call","params":{"name":"x"},"paramſ":{"name":"y"}}`, `"params" and "paramſ"`},
		{`{"id":1,"method":"tools/call","params":{"name":"x","arguments":{"task":"a","TASK":"b"}}}`, `"task" and "TASK"`},
		{`[{"id":1,"method":"ping"},{"id":2,"method":"ping","ID":3}]`, `"id" and "ID"`},
		{`{"id":1,"method":"tools/call","params":{"name":"x","_meta":{"k":1,"\u212a":2}}}`, `"k" and "K"`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"name":"n","a":{"name":"m"},"b":[{"name":1},{"name":2}]}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"body":"\"name\":1,\"Name\":2"}}}`, ""},
		{`[{"id":1,"method":"ping"},{"id":2,"method":"ping"}]`, ""},
	} {
		msgs, _, err := decodeMessages([]byte(c.body))
		switch {
		case c.err == "" && (err != nil || len(msgs) == 0):
			t.Errorf("%s: %v, %d messages; want it decoded", c.body, err, len(msgs))
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || msgs != nil):
			t.Errorf("%s: %v, %d messages; want an error with %q", c.body, err, len(msgs), c.err)
		}
	}
}

// TestRepeatedMemberInLargeObjects: past the names compared in place, the
// same rule holds (a repeat in another case after 40 names is found).
func TestRepeatedMemberInLargeObjects(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{`)
	for i := range 40 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	distinct := b.String() + `"last":0}}}`
	repeated := b.String() + `"K7":0}}}`
	if a, _ := repeatedMember([]byte(distinct)); a != "" {
		t.Fatalf("distinct names: %q", a)
	}
	if a, c := repeatedMember([]byte(repeated)); a != "k7" || c != "K7" {
		t.Fatalf("repeated: %q %q", a, c)
	}
}
