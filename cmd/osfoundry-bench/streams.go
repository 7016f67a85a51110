package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The live streams scenario: one server holding many open Team mail
// streams (the owner's session page, GET /sessions/:id/stream), its memory
// and goroutines with them open, and how long one note takes to reach all of
// them.

// streamsScenario names the scenario for --only.
const streamsScenario = "live streams"

// streamsResult is what the scenario measured.
type streamsResult struct {
	Streams int `json:"streams"`
	// OpenSeconds is how long opening them all took.
	OpenSeconds float64 `json:"open_seconds"`
	// Server figures before the streams and with them all open (0 when the
	// bench did not start the server itself).
	ServerRSSBeforeMB float64 `json:"server_rss_before_mb"`
	ServerRSSMB       float64 `json:"server_rss_mb"`
	GoroutinesBefore  int     `json:"server_goroutines_before"`
	Goroutines        int     `json:"server_goroutines"`
	// Notes posted; for each, the time from sending post_session_note to the
	// note event read on every stream: percentiles over all (stream, note)
	// pairs, and the time until the last stream had it.
	Notes      int     `json:"notes"`
	P50ms      float64 `json:"fanout_p50_ms"`
	P99ms      float64 `json:"fanout_p99_ms"`
	LastP50ms  float64 `json:"all_reached_p50_ms"`
	LastMaxms  float64 `json:"all_reached_max_ms"`
	Missing    int     `json:"missing_events"`
	FirstError string  `json:"first_error,omitempty"`
}

// raiseFileLimit makes room for n more open sockets in this process (the
// Go runtime raises the soft limit on start already; this says so when the
// hard limit is too low).
func raiseFileLimit(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	want := uint64(n + 256)
	if lim.Cur >= want {
		return nil
	}
	if lim.Max < want {
		return fmt.Errorf("%d streams need %d open files, the hard limit is %d (ulimit -Hn)", n, want, lim.Max)
	}
	lim.Cur = want
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

// runStreams opens n streams on the first session as the owner, then posts
// notes one at a time and times their arrival on every stream. Bounded: at
// most a minute to open, ten seconds per note.
func (fx *fixture) runStreams(n, notes int, serverPID int, opsAddr string) (*streamsResult, error) {
	if err := raiseFileLimit(n); err != nil {
		return nil, err
	}
	r := &streamsResult{Streams: n, Notes: notes}
	if serverPID > 0 {
		r.ServerRSSBeforeMB = rssMB(serverPID)
		r.GoroutinesBefore = goroutines(opsAddr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Jar: fx.owner.Jar, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("%s/sessions/%d/stream", fx.url, fx.sessions[0].ID)

	// Each reader records when each note id reached its stream.
	var mu sync.Mutex
	arrived := map[int64][]time.Time{}
	var readers sync.WaitGroup
	open := make(chan error, n)
	start := time.Now()
	sem := make(chan struct{}, 50)
	for range n {
		sem <- struct{}{}
		readers.Add(1)
		go func() {
			defer readers.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			res, err := client.Do(req)
			<-sem
			if err != nil {
				open <- err
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(res.Body, 300))
				open <- fmt.Errorf("stream: HTTP %d: %s", res.StatusCode, b)
				return
			}
			br := bufio.NewReader(res.Body)
			opened := false
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					if !opened {
						open <- err
					}
					return
				}
				if !opened {
					opened = true // the "retry:" line: subscribed
					open <- nil
				}
				if id, ok := strings.CutPrefix(line, "id: "); ok {
					at := time.Now()
					nid, _ := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
					mu.Lock()
					arrived[nid] = append(arrived[nid], at)
					mu.Unlock()
				}
			}
		}()
	}
	deadline := time.After(time.Minute)
	for range n {
		select {
		case err := <-open:
			if err != nil && r.FirstError == "" {
				r.FirstError = err.Error()
			}
		case <-deadline:
			cancel()
			readers.Wait()
			return nil, fmt.Errorf("opening %d streams took over a minute", n)
		}
	}
	r.OpenSeconds = time.Since(start).Seconds()
	if r.FirstError != "" {
		cancel()
		readers.Wait()
		return r, fmt.Errorf("opening streams: %s", r.FirstError)
	}
	// Let the server settle, then read its figures with every stream open.
	time.Sleep(time.Second)
	if serverPID > 0 {
		r.ServerRSSMB = rssMB(serverPID)
		r.Goroutines = goroutines(opsAddr)
	}

	// One note at a time: sent, then wait until every stream has it.
	s := fx.sessions[0]
	sent := map[int64]time.Time{}
	var lat []time.Duration
	var lasts []time.Duration
	for k := range notes {
		t0 := time.Now()
		id, err := fx.postNote(s.Type, s.PublicID, fmt.Sprintf("fan-out %s %d", fx.runID, k))
		if err != nil {
			cancel()
			readers.Wait()
			return r, err
		}
		sent[id] = t0
		// Bounded wait: every stream has the note, or ten seconds passed.
		for wait := time.Now(); time.Since(wait) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			all := len(arrived[id]) >= n
			mu.Unlock()
			if all {
				break
			}
		}
		time.Sleep(200 * time.Millisecond) // notes apart, as an agent posts them
	}
	cancel()
	readers.Wait()
	for id, t0 := range sent {
		var last time.Duration
		for _, at := range arrived[id] {
			d := at.Sub(t0)
			lat = append(lat, d)
			last = max(last, d)
		}
		r.Missing += max(0, n-len(arrived[id]))
		lasts = append(lasts, last)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(lasts, func(i, j int) bool { return lasts[i] < lasts[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pct := func(v []time.Duration, p float64) float64 {
		if len(v) == 0 {
			return 0
		}
		return ms(v[min(len(v)-1, int(p*float64(len(v))))])
	}
	r.P50ms, r.P99ms = pct(lat, .50), pct(lat, .99)
	r.LastP50ms = pct(lasts, .50)
	if len(lasts) > 0 {
		r.LastMaxms = ms(lasts[len(lasts)-1])
	}
	return r, nil
}

// goroutines reads the server's goroutine count from its pprof listener.
func goroutines(opsAddr string) int {
	res, err := http.Get("http://" + opsAddr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	line, _ := bufio.NewReader(res.Body).ReadString('\n')
	// "goroutine profile: total 1234"
	n, _ := strconv.Atoi(strings.TrimSpace(line[strings.LastIndex(line, " ")+1:]))
	return n
}

// postNote posts a note with post_session_note as the first agent and
// returns its id.
func (fx *fixture) postNote(sessionType, sessionID, subject string) (int64, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fx.seq.Add(1), "method": "tools/call", "params": map[string]any{
		"name": "post_session_note", "arguments": map[string]any{"session_type": sessionType, "session_id": sessionID,
			"subject": subject, "body": "Fan-out probe", "idempotency_key": fmt.Sprintf("fanout-%s-%d", fx.runID, fx.seq.Add(1))}}})
	req, _ := http.NewRequest(http.MethodPost, fx.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+fx.agents[0].token)
	res, err := fx.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	var out struct {
		Result struct {
			StructuredContent struct {
				ID int64 `json:"id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result.StructuredContent.ID == 0 {
		return 0, fmt.Errorf("post_session_note: HTTP %d: %.300s", res.StatusCode, b)
	}
	return out.Result.StructuredContent.ID, nil
}
