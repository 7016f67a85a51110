package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestLiveStreamAcrossProcessesAndShutdown: the owner's stream on replica B
// gets a note posted through replica A (two processes, one database), and
// SIGTERM ends B promptly with the stream open: the drain does not wait for
// streams.
func TestLiveStreamAcrossProcessesAndShutdown(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	base := "http://" + freePort(t)
	a := startReplica(t, dsn, base)
	b := startReplica(t, dsn, base, "--shutdown-timeout", "10s")
	a.waitReady()
	b.waitReady()
	w := newWorld(t, dsn, base, 1)

	owner := newOwnerBrowser(t, b.URL, w)
	owner.signIn()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/sessions/%d/stream", b.URL, w.session.ID), nil)
	streams := *owner.c
	streams.Timeout = 0 // the stream stays open for the test's length
	stream, err := streams.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK || stream.Header.Get("Content-Type") != "text/event-stream" || stream.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("stream on B: %d %v", stream.StatusCode, stream.Header)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		r := bufio.NewReader(stream.Body)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimSpace(l)
		}
	}()
	// The stream is subscribed once its first line (the retry field) is in.
	select {
	case l := <-lines:
		if !strings.HasPrefix(l, "retry:") {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing on the stream")
	}

	posted, err := callTool(a.URL, w.tokens[0], "post_session_note", w.note("Across processes", "Posted through A", "live-1"))
	if err != nil || posted.isError {
		t.Fatalf("post via A: %v %+v", err, posted)
	}
	want := fmt.Sprintf("id: %d", int64(posted.data["id"].(float64)))
	for found := false; !found; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("B's stream ended before the note came")
			}
			found = l == want
		case <-time.After(10 * time.Second):
			t.Fatalf("B's stream never got %q", want)
		}
	}

	start := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.done:
	case <-time.After(8 * time.Second):
		t.Fatal("B still running 8 s after SIGTERM with a stream open")
	}
	took := time.Since(start)
	for range lines { // the stream ended
	}
	t.Logf("SIGTERM to exit with an open stream: %v (drain timeout 10 s)", took)
	if b.err != nil {
		t.Fatalf("B's exit: %v", b.err)
	}
	if took > 3*time.Second {
		t.Fatalf("exit took %v with a stream open, want well under the 10 s drain", took)
	}
}
