package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// relayGate is the public address of two replicas where an agent's relay
// stream (GET /agent/events) goes to A and everything else to B, and whose
// relay streams the test can cut and hold off.
type relayGate struct {
	*httptest.Server
	blocked atomic.Bool // new streams get 503
	streams atomic.Int64
	mu      sync.Mutex
	cancel  []context.CancelFunc
}

func newRelayGate(t *testing.T, addr string, a, b *replica) *relayGate {
	t.Helper()
	toA, toB := roundRobinHandler(a), roundRobinHandler(b)
	g := &relayGate{}
	g.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent/events" {
			toB.ServeHTTP(w, r)
			return
		}
		if g.blocked.Load() {
			http.Error(w, "held off", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		g.mu.Lock()
		g.cancel = append(g.cancel, cancel)
		g.mu.Unlock()
		g.streams.Add(1)
		toA.ServeHTTP(w, r.WithContext(ctx))
	}))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	g.Listener.Close()
	g.Listener = l
	g.Start()
	t.Cleanup(g.Close)
	return g
}

// cut ends every relay stream open through the gate.
func (g *relayGate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.cancel {
		c()
	}
	g.cancel = nil
}

// spool is the bridge's spool as the hooks read it.
type spool struct {
	LastEventID int64 `json:"last_event_id"`
	Streams     []int `json:"streams"`
	Notes       []struct {
		Note struct {
			ID      int64  `json:"id"`
			Subject string `json:"subject"`
		} `json:"note"`
		DeliveredAt *time.Time `json:"delivered_at"`
		By          string     `json:"by"`
		Reported    bool       `json:"reported"`
	} `json:"notes"`
}

func (sp spool) connected() bool { return len(sp.Streams) > 0 }

func (m *agentMachine) spool() spool {
	m.t.Helper()
	files, _ := filepath.Glob(filepath.Join(m.root, "state", "osfoundry", "relay", "*", "spool.json"))
	var sp spool
	if len(files) == 1 {
		b, _ := os.ReadFile(files[0])
		json.Unmarshal(b, &sp)
		if fi, err := os.Stat(files[0]); err == nil && fi.Mode().Perm() != 0o600 {
			m.t.Fatalf("the spool is %v, want 0600", fi.Mode().Perm())
		}
	}
	return sp
}

// startBridge runs `osfoundry agent mcp` in the machine's checkout, with
// no client talking to it yet: its relay starts at once.
func (m *agentMachine) startBridge(server string) {
	m.t.Helper()
	cmd := m.command("agent", "mcp", "--server", server)
	stdin, _ := cmd.StdinPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if m.t.Failed() {
			m.t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
}

// TestRelayAcrossReplicasReachesTheHooks: a bridge holds its relay stream
// on replica A; owners' notes posted through replica B reach its spool,
// through a cut of the stream and a note posted while it was away, each
// once, and an agent's note to the whole session never. PostToolUse then
// delivers them all at once (no 30 s window, no network), the next one
// nothing; Stop blocks once for a note that came after, honours
// stop_hook_active and never blocks twice for a note. The server records
// each delivery, and the owner's page shows the note in the agent's
// context, then read once the agent reads it.
func TestRelayAcrossReplicasReachesTheHooks(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startReplica)
	gate := newRelayGate(t, rp.addr, rp.a, rp.b)
	s := &agentServer{URL: rp.base, dsn: rp.dsn, w: rp.w, replica: rp.b}
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "relay-bot")
	owner := newOwnerBrowser(t, rp.b.URL, rp.w)
	owner.signIn()

	m.startBridge(rp.base)
	awaitCond(t, 20*time.Second, "the bridge's relay stream is open", func() bool { return m.spool().connected() })
	spooled := func(n int) func() bool {
		return func() bool { return len(m.spool().Notes) >= n }
	}

	if err := owner.note(rp.w.session.ID, "First", "Posted on B while the stream is on A"); err != nil {
		t.Fatal(err)
	}
	awaitCond(t, 10*time.Second, "the first note is in the spool", spooled(1))

	// The stream is cut and held off; a note comes meanwhile.
	gate.blocked.Store(true)
	gate.cut()
	awaitCond(t, 10*time.Second, "the bridge notices the cut", func() bool { return !m.spool().connected() })
	if err := owner.note(rp.w.session.ID, "Second", "Posted while the stream was away"); err != nil {
		t.Fatal(err)
	}
	// Another agent's note to the whole session is not addressed to it.
	if r, err := callTool(rp.b.URL, rp.w.tokens[0], "post_session_note", rp.w.note("To all", "Not for the bridge", "relay-all")); err != nil || r.isError {
		t.Fatalf("agent note: %v %+v", err, r)
	}
	gate.blocked.Store(false)
	awaitCond(t, 20*time.Second, "the bridge reconnects and gets the note it missed", spooled(2))
	if err := owner.note(rp.w.session.ID, "Third", "Posted after the reconnect"); err != nil {
		t.Fatal(err)
	}
	awaitCond(t, 10*time.Second, "the third note is in the spool", spooled(3))
	sp := m.spool()
	var subjects []string
	for _, n := range sp.Notes {
		subjects = append(subjects, n.Note.Subject)
	}
	if strings.Join(subjects, ",") != "First,Second,Third" || gate.streams.Load() < 2 {
		t.Fatalf("spool after a reconnect (%d streams): %v", gate.streams.Load(), subjects)
	}

	// PostToolUse: all three, once, without the network.
	before := s.mcpRequests()
	text := hookAnswer(t, "PostToolUse", m.hookEvent(rp.base, "PostToolUse", nil))
	for _, want := range []string{"First", "Second", "Third"} {
		if strings.Count(text, "Subject: "+want) != 1 {
			t.Fatalf("PostToolUse context lacks %q once:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Not for the bridge") {
		t.Fatalf("a note to all from another agent reached the context:\n%s", text)
	}
	quiet(t, "a second PostToolUse", m.hookEvent(rp.base, "PostToolUse", nil))
	if after := s.mcpRequests(); after != before {
		t.Fatalf("the hooks called /mcp %d times with a bridge running", after-before)
	}

	// Stop: a note that came after blocks the end of the turn once.
	stop := func(in map[string]any) { in["stop_hook_active"] = false }
	quiet(t, "Stop with nothing unseen", m.hookEvent(rp.base, "Stop", stop))
	if err := owner.note(rp.w.session.ID, "Fourth", "Came while the agent worked"); err != nil {
		t.Fatal(err)
	}
	awaitCond(t, 10*time.Second, "the fourth note is in the spool", spooled(4))
	quiet(t, "Stop after a Stop block (stop_hook_active)", m.hookEvent(rp.base, "Stop", func(in map[string]any) { in["stop_hook_active"] = true }))
	r := m.hookEvent(rp.base, "Stop", stop)
	var block struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(r.stdout), &block); err != nil || block.Decision != "block" || strings.Count(block.Reason, "Subject: Fourth") != 1 ||
		strings.Contains(block.Reason, "Subject: Third") {
		t.Fatalf("Stop with an unseen note: exit %d %q", r.code, r.stdout)
	}
	quiet(t, "Stop again", m.hookEvent(rp.base, "Stop", stop))
	quiet(t, "PostToolUse after the Stop delivered it", m.hookEvent(rp.base, "PostToolUse", nil))

	// Delivered, as the owners see it; then read.
	awaitCond(t, 10*time.Second, "the server records the four deliveries", func() bool {
		return countRows(t, rp.dsn, `SELECT count(*)::int FROM note_deliveries WHERE connection_id = $1`, conn) == 4
	})
	_, doc, err := owner.page(fmt.Sprintf("/sessions/%d", rp.w.session.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Find(`[data-testid="note-delivered"]`).Length(); got != 4 || !strings.Contains(doc.Find(`[data-testid="note-delivered"]`).First().Text(), "@relay-bot") {
		t.Fatalf("the page shows %d notes in the agent's context, want 4: %q", got, doc.Find(`[data-testid="note-receipts"]`).Text())
	}
	read := m.agentCall(rp.base, "read_session_mail", map[string]any{"session_type": rp.w.session.Type, "session_id": rp.w.session.PublicID})
	if !strings.Contains(read.text, `"delivered_at"`) {
		t.Fatalf("read_session_mail does not say which notes were delivered: %s", read.text)
	}
	_, doc, _ = owner.page(fmt.Sprintf("/sessions/%d", rp.w.session.ID))
	if got := doc.Find(`[data-testid="note-delivered"]`).Length(); got != 0 || doc.Find(`[data-testid="note-receipt"]`).Length() != 4 {
		t.Fatalf("after the read: %q", doc.Find(`[data-testid="note-receipts"]`).Text())
	}
}

// TestBridgeSendsNotesAsClaudeChannelNotifications: the bridge declares
// capabilities.experimental["claude/channel"] in its initialize result and,
// once the client has initialized, sends each note addressed to the agent
// as notifications/claude/channel (content the fenced note; meta sender,
// session and note id) as it arrives. Where the client listens to channels
// (OSFOUNDRY_CHANNEL=1) that is the note's delivery: the hooks leave it out
// and the server records it delivered.
func TestBridgeSendsNotesAsClaudeChannelNotifications(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "channel-bot")
	owner := s.owner(t)
	owner.signIn()

	cmd := m.command("agent", "mcp", "--server", s.URL)
	cmd.Env = append(cmd.Env, "OSFOUNDRY_CHANNEL=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			var msg map[string]any
			if !ok || json.Unmarshal([]byte(l), &msg) != nil {
				t.Fatalf("%s: %q", what, l)
			}
			return msg
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: nothing from the bridge", what)
		}
		return nil
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"2"}}}`)
	init := next("initialize")
	caps, _ := init["result"].(map[string]any)["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	if _, ok := exp["claude/channel"]; !ok || init["result"].(map[string]any)["protocolVersion"] == nil {
		t.Fatalf("initialize result without the channel capability: %v", init)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	awaitCond(t, 20*time.Second, "the bridge's relay stream is open", func() bool { return m.spool().connected() })

	if err := owner.note(s.w.session.ID, "Channel", "Straight into the conversation"); err != nil {
		t.Fatal(err)
	}
	n := next("the channel notification")
	params, _ := n["params"].(map[string]any)
	meta, _ := params["meta"].(map[string]any)
	content, _ := params["content"].(string)
	id := int64(countRows(t, s.dsn, `SELECT max(id)::int FROM notes WHERE session_id = $1`, s.w.session.ID))
	if n["method"] != "notifications/claude/channel" || !strings.Contains(content, "Subject: Channel\nStraight into the conversation") ||
		!strings.Contains(content, "[osfoundry-note ") || meta["note_id"] != fmt.Sprint(id) ||
		meta["session"] != s.w.session.Type+" "+s.w.session.PublicID || meta["sender"] == "" {
		t.Fatalf("channel notification: %v", n)
	}
	quiet(t, "PostToolUse after the channel delivered the note", m.hookEvent(s.URL, "PostToolUse", nil))
	awaitCond(t, 10*time.Second, "the channel's delivery is recorded", func() bool {
		return countRows(t, s.dsn, `SELECT count(*)::int FROM note_deliveries WHERE connection_id = $1 AND note_id = $2`, conn, id) == 1
	})
	if sp := m.spool(); len(sp.Notes) != 1 || sp.Notes[0].By != "channel" {
		t.Fatalf("spool: %+v", sp)
	}
}
