package mcp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/store"
)

// lossyProxy sits between the client and the server. It forwards every
// request, and for post_session_note calls drops about one response in ten
// (a seeded pattern) after the server has answered, that is after the note
// was committed: the client sees a transport error.
type lossyProxy struct {
	next    http.RoundTripper
	mu      sync.Mutex
	rnd     *rand.Rand
	dropped int
}

var errLost = errors.New("lossy proxy: response lost after the server committed")

func (p *lossyProxy) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := p.next.RoundTrip(r)
	if err != nil || !bytes.Contains(body, []byte(`"post_session_note"`)) {
		return resp, err
	}
	p.mu.Lock()
	drop := p.rnd.IntN(10) == 0
	if drop {
		p.dropped++
	}
	p.mu.Unlock()
	if !drop {
		return resp, nil
	}
	// Read the whole answer first: the server has finished and committed.
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errLost
}

// TestIdempotencyUnderFaults posts 200 notes through the lossy proxy with
// up to 3 retries each. A key derived from the note's content gives exactly
// 200 rows; a fresh key per attempt gives one extra row per lost response
// that was retried.
func TestIdempotencyUnderFaults(t *testing.T) {
	t.Parallel()
	const notes, maxRetries = 200, 3
	for _, mode := range []string{"content key", "fresh key per attempt"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tm := e.team("team_session", store.RoleContributor, "alice")
			a, s := tm.agents[0], tm.s
			// 200 notes as fast as they go: the most writes a project allows.
			if err := e.st.SetProjectWriteLimits(e.ctx, s.WorkspaceID, s.ProjectID, store.WriteLimits{PerMinute: store.MaxWritesPerMinute, Burst: store.MaxWriteBurst}); err != nil {
				t.Fatal(err)
			}

			proxy := &lossyProxy{next: http.DefaultTransport, rnd: rand.New(rand.NewPCG(2026, 11))}
			cs := a.connect(proxy)
			var retried, exhausted, dupResponses, recoveredNotes int
			for i := range notes {
				subject := fmt.Sprintf("note %03d", i)
				body := fmt.Sprintf("body of note %d", i)
				sum := sha256.Sum256([]byte(s.PublicID + "\x00" + subject + "\x00" + body))
				lost := 0
				for attempt := 0; attempt <= maxRetries; attempt++ {
					key := hex.EncodeToString(sum[:16])
					if mode != "content key" {
						key = fmt.Sprintf("note-%d-attempt-%d", i, attempt)
					}
					res, err := cs.CallTool(e.ctx, &mcpsdk.CallToolParams{Name: "post_session_note",
						Arguments: with(ref(s), "subject", subject, "body", body, "idempotency_key", key)})
					if err != nil {
						lost++
						if attempt < maxRetries {
							retried++
						} else {
							exhausted++
						}
						cs = a.connect(proxy) // a lost response may leave the session unusable
						continue
					}
					if res.IsError {
						t.Fatalf("note %d: %s", i, text(res))
					}
					var out postResult
					if err := jsonInto(res.StructuredContent, &out); err != nil {
						t.Fatal(err)
					}
					if out.Duplicate {
						dupResponses++
					}
					if lost > 0 {
						recoveredNotes++
					}
					break
				}
			}
			var rows, subjects int
			if err := e.sql().QueryRow(`SELECT count(*), count(DISTINCT subject) FROM notes WHERE sender_connection_id = $1`,
				a.conn.ID).Scan(&rows, &subjects); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d responses lost, %d retried, %d exhausted; %d rows, %d duplicate rows, %d duplicate:true answers",
				mode, proxy.dropped, retried, exhausted, rows, rows-subjects, dupResponses)
			if proxy.dropped == 0 || proxy.dropped != retried+exhausted {
				t.Fatalf("proxy dropped %d, client lost %d", proxy.dropped, retried+exhausted)
			}
			// Every attempt reached the database, so every note has a row.
			if subjects != notes {
				t.Fatalf("%d distinct notes stored, want %d", subjects, notes)
			}
			if mode == "content key" {
				if rows != notes {
					t.Fatalf("%d rows, want exactly %d", rows, notes)
				}
				// Each note whose first answer was lost got the stored one back.
				if dupResponses != recoveredNotes {
					t.Fatalf("%d duplicate:true answers, want %d (notes that recovered after a lost answer)", dupResponses, recoveredNotes)
				}
			} else {
				if rows-subjects != retried || rows != notes+retried {
					t.Fatalf("%d rows (%d duplicates), want %d + %d retried lost responses", rows, rows-subjects, notes, retried)
				}
				if dupResponses != 0 {
					t.Fatalf("%d duplicate:true answers with fresh keys", dupResponses)
				}
			}
		})
	}
}

// TestConcurrentSameKeyOneRow: 20 goroutines on two replicas (two handlers,
// one database) post the same key at once; one row results and every
// caller gets its id, exactly one with duplicate false.
func TestConcurrentSameKeyOneRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "alice")
	a, s := tm.agents[0], tm.s

	// A second replica serving the same public resource.
	replica := mcp.New(mcp.Options{Store: e.st, BaseURL: e.base})
	srv2 := httptest.NewServer(replica)
	t.Cleanup(srv2.Close)

	const n = 20
	sessions := make([]*mcpsdk.ClientSession, n)
	for i := range sessions {
		url := e.mcpURL()
		if i%2 == 1 {
			url = srv2.URL + "/mcp"
		}
		sessions[i] = connectClient(t, url, bearer{a.token, http.DefaultTransport})
	}
	args := with(ref(s), "subject", "done", "body", "merged", "idempotency_key", "done-1")
	results := make([]postResult, n)
	errs := concurrently(n, func(i int) error {
		res, err := sessions[i].CallTool(e.ctx, &mcpsdk.CallToolParams{Name: "post_session_note", Arguments: args})
		if err == nil && res.IsError {
			err = errors.New(text(res))
		}
		if err == nil {
			err = jsonInto(res.StructuredContent, &results[i])
		}
		return err
	})
	firsts := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if results[i].ID != results[0].ID {
			t.Fatalf("caller %d got note %d, caller 0 got %d", i, results[i].ID, results[0].ID)
		}
		if !results[i].Duplicate {
			firsts++
		}
	}
	if firsts != 1 {
		t.Fatalf("%d callers got duplicate:false, want 1", firsts)
	}
	if rows := countNotes(e, a.conn.ID); rows != 1 {
		t.Fatalf("%d rows, want 1", rows)
	}
}
