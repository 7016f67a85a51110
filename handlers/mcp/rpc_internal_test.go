package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// TestEncodeResultAsTheSDK: encodeResult writes the bytes the SDK's encoder
// writes (marshalUnescaped) for every kind of result a tool gives: plain,
// with text lines and the unread hint, an isError result, HTML, line and
// paragraph separators, invalid UTF-8 and control characters, empty ones,
// and the results it leaves to marshalUnescaped.
func TestEncodeResultAsTheSDK(t *testing.T) {
	unread := store.Unread{Total: 3, SessionCount: 2, Sessions: []store.UnreadSession{
		{SessionType: "team_session", SessionID: "s_<1>", Count: 2}, {SessionType: "agent_session", SessionID: "s_2", Count: 1}}}
	tool := func(out any, lines []string, u store.Unread) *mcpsdk.CallToolResult {
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		res := &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: string(b)}}}
		for _, l := range lines {
			res.Content = append(res.Content, &mcpsdk.TextContent{Text: "\n" + l})
		}
		res, err = withUnread(res, b, u)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	refused := func(msg string, u store.Unread) *mcpsdk.CallToolResult {
		res, err := withUnread(errorResult(errors.New(msg)), nil, u)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	odd := "a<b>&c \u2028 \u2029 \x00 \x1f \xff\xfe é 😀 \"quoted\" back\\slash\ttab\nline"
	for name, res := range map[string]*mcpsdk.CallToolResult{
		"plain":               tool(map[string]any{"id": 1, "duplicate": false}, nil, store.Unread{}),
		"with lines":          tool(map[string]any{"overlaps": []string{"x"}}, []string{"@bob is also on main <b>", "2 more"}, store.Unread{}),
		"with the hint":       tool(map[string]any{"notes": []map[string]string{{"body": odd}}}, nil, unread),
		"lines and hint":      tool(map[string]any{"task": odd}, []string{odd}, unread),
		"empty object":        tool(struct{}{}, nil, store.Unread{}),
		"a string":            tool(odd, nil, store.Unread{}),
		"a refusal":           refused("not invited <to> this session & more", store.Unread{}),
		"a refusal with hint": refused(odd, unread),
		"no content":          {Content: []mcpsdk.Content{}},
		"empty text":          {Content: []mcpsdk.Content{&mcpsdk.TextContent{}}},
		"meta":                {Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "x"}}, Meta: mcpsdk.Meta{"k": "<v>"}},
		"text meta":           {Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "x", Meta: mcpsdk.Meta{"k": 1}}}},
		"annotations":         {Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "x", Annotations: &mcpsdk.Annotations{Priority: 1}}}},
		"not text":            {Content: []mcpsdk.Content{&mcpsdk.ImageContent{Data: []byte("<img>"), MIMEType: "image/png"}}},
		"raw structured":      {Content: []mcpsdk.Content{}, StructuredContent: json.RawMessage(`{ "a" : "<b>" }`)},
		"map structured":      {Content: []mcpsdk.Content{}, StructuredContent: map[string]string{"a": "<b>"}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := marshalUnescaped(res)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeResult(res)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("encodeResult\n%s\nthe SDK's encoder\n%s", got, want)
			}
		})
	}
}
