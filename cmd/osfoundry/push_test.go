package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/push"
	"github.com/osfoundry/osfoundry/push/pushtest"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestKill9WithPushesPendingDeliversEachOnce: blocking questions are asked
// while the push service refuses (503), so their pushes wait for a retry;
// the server is killed with kill -9; after the restart every device gets
// every question exactly once, signed with the key the server was given and
// readable with the device's keys.
func TestKill9WithPushesPendingDeliversEachOnce(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	base := "http://" + addr
	keys, err := push.GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	svc := pushtest.Start(t, keys.PublicKey())
	r := startVAPIDReplica(t, dsn, base, addr, keys)
	r.waitReady()
	w := newWorld(t, dsn, base, 1)
	ctx := context.Background()
	var devices []*pushtest.Device
	for range 3 {
		d := svc.Subscribe()
		svc.Answer(d, repeat(http.StatusServiceUnavailable, 1000)...)
		b64 := base64.RawURLEncoding
		p256dh, _ := b64.DecodeString(d.P256dh)
		auth, _ := b64.DecodeString(d.Auth)
		if _, err := w.st.SubscribePush(ctx, w.owner.WorkspaceID, w.owner.ID, store.PushSubscribe{Endpoint: d.Endpoint, P256dh: p256dh, Auth: auth, Name: "Phone"}, true); err != nil {
			t.Fatal(err)
		}
		devices = append(devices, d)
	}
	const questions = 5
	for i := range questions {
		res, err := callTool(base, w.tokens[0], "ask_owner", w.ask(fmt.Sprintf("k%d", i), fmt.Sprintf("Question %d?", i), "urgency", "blocking"))
		if err != nil || res.isError {
			t.Fatalf("ask_owner: %v %+v", err, res)
		}
	}
	awaitCond(t, 30*time.Second, "a refused attempt on every device", func() bool {
		for _, d := range devices {
			if svc.Refused(d) == 0 {
				return false
			}
		}
		return true
	})
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
	if n := countRows(t, dsn, `SELECT count(*)::int FROM push_outbox WHERE state = 'pending'`); n != 3*questions {
		t.Fatalf("%d pushes pending at the kill, want %d", n, 3*questions)
	}
	for _, d := range devices {
		svc.Accept(d)
	}
	r = startVAPIDReplica(t, dsn, base, addr, keys)
	r.waitReady()
	awaitCond(t, 60*time.Second, "every push sent", func() bool {
		return countRows(t, dsn, `SELECT count(*)::int FROM push_outbox WHERE state = 'sent'`) == 3*questions
	})
	for i, d := range devices {
		tags := map[string]int{}
		for _, m := range svc.Messages(d) {
			tags[m.Payload.Tag]++
			if m.Payload.Title != "Agent asks in S" || len(m.Payload.Actions) != 2 {
				t.Errorf("device %d: payload %+v", i, m.Payload)
			}
		}
		if len(tags) != questions {
			t.Errorf("device %d got %d questions, want %d", i, len(tags), questions)
		}
		for tag, n := range tags {
			if n != 1 {
				t.Errorf("device %d got %s %d times", i, tag, n)
			}
		}
	}
}

// startVAPIDReplica starts the test server with the VAPID key given (the
// flag: the test cannot set the variable of a parallel test's process),
// reaching the loopback push service.
func startVAPIDReplica(t *testing.T, dsn, base, addr string, keys *push.Keys) *replica {
	t.Helper()
	return startTestReplica(t, dsn, base, "--addr", addr, "--allow-private-targets", "--vapid-private-key", keys.PrivateKey())
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
