package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestReplicasShareOneIdempotencyKey(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startReplica)
	dsn, a, b, w := rp.dsn, rp.a, rp.b, rp.w
	proxy := rp.proxy(t)

	var wg sync.WaitGroup
	ids := make([]float64, 20)
	errs := make([]error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := callTool(proxy.URL, w.tokens[0], "post_session_note", w.note("Same", "Same body", "one-key"))
			if err == nil && (r.isError || r.rpcErr != "") {
				err = fmt.Errorf("refused: %s %s", r.text, r.rpcErr)
			}
			if err == nil {
				ids[i], _ = r.data["id"].(float64)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("retry %d: %v", i, err)
		}
		if ids[i] == 0 || ids[i] != ids[0] {
			t.Fatalf("retry %d got note %v, retry 0 got %v", i, ids[i], ids[0])
		}
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM notes WHERE idempotency_key = 'one-key'`); n != 1 {
		t.Fatalf("%d rows for one key over two replicas, want 1", n)
	}
	if !strings.Contains(a.logs.String(), "POST") && !strings.Contains(b.logs.String(), "POST") {
		t.Log("request lines not logged at this level")
	}
}

func TestKill9WhilePostingLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	base := "http://" + addr
	start := func() *replica {
		r := startReplica(t, dsn, base, "--addr", addr)
		r.waitReady()
		return r
	}
	r := start()
	w := newWorld(t, dsn, base, 8)

	const perClient = 30
	var mu sync.Mutex
	acked := map[string]float64{}
	var total atomic.Int64
	// postAll has 8 clients post their perClient notes at once, each with a
	// key derived from its content, and hands each reply to each.
	postAll := func(each func(key string, res *toolReply, err error)) {
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perClient {
					subject, body := fmt.Sprintf("Note %d-%d", c, i), fmt.Sprintf("Body of note %d from client %d", i, c)
					sum := sha256.Sum256([]byte(subject + "\x00" + body))
					key := hex.EncodeToString(sum[:16])
					res, err := callTool(base, w.tokens[c], "post_session_note", w.note(subject, body, key))
					each(key, res, err)
				}
			}()
		}
		wg.Wait()
	}
	killed := make(chan struct{})
	var once sync.Once
	postAll(func(key string, res *toolReply, err error) {
		if err == nil && res.status == 200 && !res.isError && res.rpcErr == "" {
			mu.Lock()
			acked[key], _ = res.data["id"].(float64)
			mu.Unlock()
			if total.Add(1) >= 60 {
				once.Do(func() {
					_ = r.cmd.Process.Signal(syscall.SIGKILL)
					close(killed)
				})
			}
		}
	})
	select {
	case <-killed:
	default:
		t.Fatal("the server was never killed")
	}
	<-r.done
	ackedBefore := len(acked)
	r = start()

	// Every client now (re)sends every note: retries of acknowledged notes must
	// come back as duplicates with the same id; the rest are stored once.
	var duplicates atomic.Int64
	postAll(func(key string, res *toolReply, err error) {
		if err != nil || res.isError || res.rpcErr != "" {
			t.Errorf("retry after restart: %v %+v", err, res)
			return
		}
		id, _ := res.data["id"].(float64)
		if first, ok := acked[key]; ok {
			if dup, _ := res.data["duplicate"].(bool); !dup || id != first {
				t.Errorf("acknowledged note %s came back as id %v duplicate=%v, first id %v", key, id, res.data["duplicate"], first)
				return
			}
			duplicates.Add(1)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	if duplicates := int(duplicates.Load()); duplicates != ackedBefore {
		t.Fatalf("duplicates %d, acknowledged before the kill %d", duplicates, ackedBefore)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM notes WHERE session_id = $1`, w.session.ID); n != 8*perClient {
		t.Fatalf("%d notes stored, want exactly %d", n, 8*perClient)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM resource_events WHERE session_id = $1 AND kind = 'note_posted'`, w.session.ID); n != 8*perClient {
		t.Fatalf("%d note events, want %d (one per note)", n, 8*perClient)
	}
	t.Logf("acknowledged before kill -9: %d of %d; all %d stored exactly once after restart", ackedBefore, 8*perClient, 8*perClient)
}

func TestToolCallsDuringDatabaseOutage(t *testing.T) {
	t.Parallel()
	pg := ownCluster(t)
	addr := freePort(t)
	base := "http://" + addr
	r := startReplica(t, pg.DSN, base, "--addr", addr)
	r.waitReady()
	w := newWorld(t, pg.DSN, base, 5)
	before, err := callTool(base, w.tokens[0], "post_session_note", w.note("Before", "Before the outage", "before"))
	if err != nil || before.isError {
		t.Fatalf("before: %v %+v", err, before)
	}
	w.st.Close()

	// Load across the outage: 4 clients post notes with content-derived keys
	// (at most 400 calls each), retrying each note until it is acknowledged.
	stopLoad := make(chan struct{})
	type outcome struct{ ok, unavailable, other int }
	results := make([]outcome, 4)
	var oks, refusals [4]atomic.Int64 // the same counts, read while the load runs
	// more waits until every client has had n more answers of a kind than now.
	more := func(n int64, counters *[4]atomic.Int64, what string) {
		t.Helper()
		var want [4]int64
		for c := range counters {
			want[c] = counters[c].Load() + n
		}
		if !waitFor(20*time.Second, func() bool {
			for c := range counters {
				if counters[c].Load() < want[c] {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("the load clients did not get %d more %s each", n, what)
		}
	}
	acked := make([]map[string]float64, 4)
	var loadWG sync.WaitGroup
	for c := range 4 {
		acked[c] = map[string]float64{}
		loadWG.Add(1)
		go func() {
			defer loadWG.Done()
			i := 0
			for range 400 {
				select {
				case <-stopLoad:
					return
				default:
				}
				key := fmt.Sprintf("load-%d-%d", c, i)
				res, err := callTool(base, w.tokens[1+c], "post_session_note", w.note("Load "+key, "Body "+key, key))
				switch {
				case err == nil && res.status == 200 && !res.isError && res.rpcErr == "":
					acked[c][key], _ = res.data["id"].(float64)
					results[c].ok++
					oks[c].Add(1)
					i++
				case err == nil && res.status == http.StatusServiceUnavailable && strings.Contains(res.rpcErr, "database"):
					results[c].unavailable++
					refusals[c].Add(1)
				case err == nil && res.rpcErr != "" && !strings.Contains(res.rpcErr, "panic"):
					results[c].unavailable++ // a call already past the token check when the database went away
					refusals[c].Add(1)
				default:
					results[c].other++
					t.Errorf("client %d: unexpected answer during the outage: %v %+v", c, err, res)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	more(2, &oks, "acknowledgements before the outage")

	pg.Stop()
	for _, tool := range []string{"list_agents", "post_session_note", "read_session_mail"} {
		res, err := callTool(base, w.tokens[0], tool, w.note("During", "During", "during"))
		if err != nil {
			t.Fatalf("%s during outage: %v", tool, err)
		}
		if res.status != http.StatusServiceUnavailable || !strings.Contains(res.rpcErr, "database") {
			t.Fatalf("%s during outage: HTTP %d %+v, want 503 with a clear JSON-RPC error", tool, res.status, res)
		}
	}
	more(5, &refusals, "refusals without a database")
	pg.restart()
	r.waitReady()
	more(2, &oks, "acknowledgements against the recovered database")
	close(stopLoad)
	loadWG.Wait()
	total := outcome{}
	for c := range 4 {
		total.ok += results[c].ok
		total.unavailable += results[c].unavailable
		total.other += results[c].other
	}
	if total.unavailable == 0 || total.ok == 0 {
		t.Fatalf("the load never met the outage or never succeeded: %+v", total)
	}
	db := storetest.SQLAt(t, pg.DSN)
	for c := range 4 {
		for key, id := range acked[c] {
			var n int
			var stored float64
			if err := db.QueryRow(`SELECT count(*), coalesce(max(id), 0) FROM notes WHERE idempotency_key = $1`, key).Scan(&n, &stored); err != nil {
				t.Fatal(err)
			}
			if n != 1 || stored != id {
				t.Fatalf("acknowledged note %s (id %v): %d rows, id %v", key, id, n, stored)
			}
		}
	}
	t.Logf("under load across the outage: %d acknowledged (all stored once), %d clear refusals, %d other", total.ok, total.unavailable, total.other)
	var after *toolReply
	for range 100 { // the pool reconnects on demand; bounded retries
		after, err = callTool(base, w.tokens[0], "read_session_mail", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID})
		if err == nil && after.status == 200 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || after.isError || !strings.Contains(after.text, `"notes"`) {
		t.Fatalf("after recovery: %v %+v", err, after)
	}
	var kept int
	if err := db.QueryRow(`SELECT count(*) FROM notes WHERE idempotency_key = 'before' AND body = 'Before the outage'`).Scan(&kept); err != nil || kept != 1 {
		t.Fatalf("the note acknowledged before the outage: %d rows, %v", kept, err)
	}
	if strings.Contains(r.logs.String(), "panic") {
		t.Fatal("panic in the server log")
	}
}
