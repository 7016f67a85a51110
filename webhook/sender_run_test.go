package webhook

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// TestTwoSendersNeverDeliverTwice runs two senders, each with its own pool
// and listener (two replicas), against one outbox.
func TestTwoSendersNeverDeliverTwice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t)
	rcv.answer = func(_ *http.Request, n int) (int, http.Header) {
		if n%7 == 3 {
			return http.StatusServiceUnavailable, nil // now and then, a retry
		}
		return http.StatusOK, nil
	}
	paths := []string{"/a", "/b", "/c", "/d"}
	for _, p := range paths {
		w.endpoint(rcv.url(p), store.WebhookJSON)
	}
	run(t, testOptions(w.open()))
	run(t, testOptions(w.open()))
	const notes = 60
	var want []int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range notes / 3 {
				id := w.note(fmt.Sprintf("n%d-%d", g, i), "b").ID
				mu.Lock()
				want = append(want, id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(want)
	delivered := func(p string) []int64 {
		var got []int64
		for _, g := range rcv.requests(p) {
			got = append(got, noteOf(t, g))
		}
		return got
	}
	waitFor(t, 30*time.Second, "every note at every endpoint", func() bool {
		for _, p := range paths {
			if len(uniq(delivered(p))) < notes {
				return false
			}
		}
		return true
	})
	var retries int
	for _, p := range paths {
		// Every note reached the endpoint, in order; a note shows twice only
		// right after itself (a 503, then its retry).
		got := delivered(p)
		if u := uniq(got); !slices.Equal(u, want) {
			t.Fatalf("%s: notes %v, want %v", p, u, want)
		}
		// Exactly one 200 per (endpoint, note): the n-th request to a path
		// got a 503 when n%7 == 3.
		ok := map[int64]int{}
		for i, id := range got {
			if i%7 != 3 {
				ok[id]++
			}
		}
		for id, c := range ok {
			if c != 1 {
				t.Fatalf("%s: note %d answered 200 %d times", p, id, c)
			}
		}
		retries += len(got) - notes
	}
	if rcv.overlap {
		t.Fatal("an endpoint had two requests in flight at once")
	}
	t.Logf("two senders, %d endpoints × %d notes: each delivered once (plus %d retries of 503s)", len(paths), notes, retries)
}

// uniq drops adjacent repeats.
func uniq(ids []int64) []int64 {
	return slices.Compact(slices.Clone(ids))
}

// TestShutdownFinishesInFlight: a sender told to stop while a request is in
// flight waits for the answer and records it; the delivery is not left to be
// sent again after its lease.
func TestShutdownFinishesInFlight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t)
	arrived := make(chan struct{})
	release := make(chan struct{})
	rcv.answer = func(*http.Request, int) (int, http.Header) {
		close(arrived)
		<-release
		return http.StatusOK, nil
	}
	e, _ := w.endpoint(rcv.url("/hook"), store.WebhookJSON)
	_, stop := run(t, testOptions(w.st))
	w.note("one", "b")
	<-arrived
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("the sender stopped with a delivery in flight")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-stopped
	if d := w.log(e)[0]; d.State != store.DeliveryDelivered || d.InFlight {
		t.Fatalf("after shutdown: %+v", d)
	}
}

// TestLatencyAndThroughput prints figures: the time from posting a note
// (its transaction included) to its arrival at a loopback receiver, and
// deliveries per second of a backlog to one endpoint (in order, one at a
// time) and to eight.
func TestLatencyAndThroughput(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t)
	w.endpoint(rcv.url("/one"), store.WebhookJSON)
	run(t, testOptions(w.st))
	const rounds = 60
	var lat []time.Duration
	for i := range rounds {
		start := time.Now()
		w.note(fmt.Sprint("latency ", i), "b")
		waitForFast(t, func() bool { return len(rcv.requests("/one")) == i+1 })
		lat = append(lat, rcv.requests("/one")[i].at.Sub(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("note posted (the store call, transaction included) → at the receiver (loopback, one endpoint, %d notes one by one): p50 %v, p99 %v, max %v",
		rounds, lat[rounds/2].Round(100*time.Microsecond), lat[rounds*99/100].Round(100*time.Microsecond), lat[rounds-1].Round(100*time.Microsecond))

	for _, endpoints := range []int{1, 8} {
		w2 := newWorld(t)
		rcv2 := newReceiver(t)
		for i := range endpoints {
			w2.endpoint(rcv2.url(fmt.Sprint("/e", i)), store.WebhookJSON)
		}
		const notes = 200
		for i := range notes {
			w2.note(fmt.Sprint("n", i), "b")
		}
		start := time.Now()
		run(t, testOptions(w2.st))
		waitFor(t, 60*time.Second, "the backlog", func() bool {
			rcv2.mu.Lock()
			defer rcv2.mu.Unlock()
			return len(rcv2.got) == notes*endpoints
		})
		took := time.Since(start)
		t.Logf("backlog of %d notes × %d endpoint(s): %d deliveries in %v, %.0f deliveries/s",
			notes, endpoints, notes*endpoints, took.Round(time.Millisecond), float64(notes*endpoints)/took.Seconds())
	}
}

// waitForFast polls every millisecond for at most 10 s (for timings).
func waitForFast(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
