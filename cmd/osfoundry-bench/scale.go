package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// The scale scenario (--scale 10000,1000000; make bench-scale): every tool
// and owner page, one call at a time, over a spread of workspaces of their
// own (testfactory.Spread: 20 workspaces, 3,000 sessions, 400 agents, busy
// sessions some owners never read) as it grows from the first note count
// to the last, so that a cost that grows with the data shows as the ratio
// of its two figures.
//
// The measured calls are workspace 0's: its owner's pages, and two agents'
// tools: one invited to 50 sessions (busy ones among them) and far behind
// on its mail, and one invited to 5 that keeps up.

// scaleRow is one call at one note count: its median and 99th-percentile
// latency over the calls made (concurrency 1).
type scaleRow struct {
	Call   string  `json:"call"`
	Notes  int     `json:"notes"`
	P50ms  float64 `json:"p50_ms"`
	P99ms  float64 `json:"p99_ms"`
	Calls  int     `json:"calls"`
	Errors int     `json:"errors,omitempty"`
	// Refused are the calls refused past a limit (limits.go), not errors.
	Refused int `json:"refused"`
	// FirstError is the first failed call's error.
	FirstError string `json:"first_error,omitempty"`
}

// scaleDatabase is the database at one note count.
type scaleDatabase struct {
	Notes int `json:"notes"`
	// DatabaseMB is pg_database_size, NotesMB the notes table with its
	// indexes and TOAST, ReceiptsMB the receipts'.
	DatabaseMB float64 `json:"database_mb"`
	NotesMB    float64 `json:"notes_mb"`
	ReceiptsMB float64 `json:"receipts_mb"`
	Receipts   int64   `json:"receipts"`
	// FillSeconds is how long writing the notes, marks and receipts up to
	// this count took, VACUUM ANALYZE included.
	FillSeconds float64 `json:"fill_seconds"`
}

type scaleResult struct {
	rows     []scaleRow
	database []scaleDatabase
}

// How long each call is measured.
const (
	scaleStep     = 3 * time.Second
	scaleMinCalls = 5
	scaleMaxCalls = 300
)

// scaleFixture is the spread and the measured calls' subjects.
type scaleFixture struct {
	runID    string
	spread   *testfactory.Spread
	measured scaleMeasured
}

// scaleMeasured are the measured calls' subjects, all in workspace 0.
type scaleMeasured struct {
	owner        *http.Client
	ownerID      int64
	workspaceID  int64
	busy, quiet  *store.Session
	heavy, light agent
	heavyHandle  string
	reader       int64 // a connection that reads the busy session's owner notes one by one (poll after a receipt)
}

// runScale builds the spread and measures every call at each note count.
func (fx *fixture) runScale(ctx context.Context, st *store.Store, counts []int) (*scaleResult, error) {
	slices.Sort(counts)
	sf, err := fx.prepareScale(ctx, st, counts[len(counts)-1])
	if err != nil {
		return nil, err
	}
	out := &scaleResult{}
	for _, n := range counts {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "scale: filling to %d notes …\n", n)
		if err := sf.spread.Fill(ctx, n); err != nil {
			return nil, err
		}
		sizes, err := testfactory.SizesOf(ctx, fx.pool)
		if err != nil {
			return nil, err
		}
		mb := func(b int64) float64 { return float64(b) / (1 << 20) }
		db := scaleDatabase{Notes: n, DatabaseMB: mb(sizes.DatabaseBytes), NotesMB: mb(sizes.NotesBytes), ReceiptsMB: mb(sizes.ReceiptsBytes),
			Receipts: sizes.Receipts, FillSeconds: time.Since(start).Seconds()}
		out.database = append(out.database, db)
		fmt.Fprintf(os.Stderr, "scale: %d notes, database %.0f MB (filled in %.0f s); measuring …\n", n, db.DatabaseMB, db.FillSeconds)
		rows, err := sf.measure(ctx, fx, st, n)
		if err != nil {
			return nil, err
		}
		out.rows = append(out.rows, rows...)
	}
	return out, nil
}

// prepareScale makes the spread, a reader invited to the busy session that
// reads nothing until measured, and signs workspace 0's owner in.
func (fx *fixture) prepareScale(ctx context.Context, st *store.Store, total int) (*scaleFixture, error) {
	password := "scale password " + fx.runID
	sp, err := testfactory.NewSpread(ctx, st, fx.pool, testfactory.SpreadOpts{Name: "scale-" + fx.runID, Password: password,
		Resource: fx.url + "/mcp", Notes: total, Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "  scale: "+format+"\n", args...) }})
	if err != nil {
		return nil, err
	}
	for _, o := range sp.Owners {
		for _, p := range o.Projects {
			if err := st.SetProjectWriteLimits(ctx, o.WorkspaceID, p, benchWriteLimits); err != nil {
				return nil, err
			}
		}
	}
	sf := &scaleFixture{runID: fx.runID, spread: sp}
	m := &sf.measured
	owner := sp.Owners[0]
	m.ownerID, m.workspaceID = owner.ID, owner.WorkspaceID
	m.busy, m.quiet = sp.Sessions[0].Session, sp.Sessions[1].Session
	heavy, light := sp.Agents[0], sp.Agents[1]
	m.heavy = agent{connectionID: heavy.ConnectionID, token: heavy.Token, slug: heavy.Profile.SenderSlug}
	m.light = agent{connectionID: light.ConnectionID, token: light.Token, slug: light.Profile.SenderSlug}
	m.heavyHandle = heavy.Profile.Handle
	conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: m.workspaceID, OwnerID: m.ownerID, ClientName: "scale reader",
		Scopes: store.AllScopes, ProjectIDs: []int64{m.busy.ProjectID}})
	if err != nil {
		return nil, err
	}
	if _, err := st.ClaimProfile(ctx, m.workspaceID, conn.ID, "scale-reader", "Scale reader"); err != nil {
		return nil, err
	}
	m.reader = conn.ID
	if err := st.Invite(ctx, m.workspaceID, m.busy.ID, conn.ID, store.RoleContributor); err != nil {
		return nil, err
	}
	if m.owner, err = fx.login(owner.Email, password); err != nil {
		return nil, fmt.Errorf("scale owner sign-in: %w", err)
	}
	return sf, nil
}

// scaleCall is one measured call: before runs untimed before each call (nil:
// nothing), call is timed; a call that returns errRetry is made again, and
// timed again, for at most a few seconds. A call that writes starts with the
// measured agents' write buckets full (limits.go).
type scaleCall struct {
	name   string
	writes bool
	before func() error
	call   func(i int) error
}

// errRetry asks for the call again: what it measures was not there yet.
var errRetry = errors.New("not yet")

// measure makes each call one at a time for scaleStep (scaleMinCalls to
// scaleMaxCalls of them) and reports its latency percentiles at n notes.
func (sf *scaleFixture) measure(ctx context.Context, fx *fixture, st *store.Store, n int) ([]scaleRow, error) {
	calls, err := sf.calls(ctx, fx, st)
	if err != nil {
		return nil, err
	}
	var out []scaleRow
	for _, c := range calls {
		row := scaleRow{Call: c.name, Notes: n}
		if c.writes {
			m := sf.measured
			if err := testfactory.FillBuckets(ctx, fx.pool, []int64{m.heavy.connectionID, m.light.connectionID}); err != nil {
				return nil, err
			}
		}
		var lat []time.Duration
		deadline := time.Now().Add(scaleStep)
		for i := 0; i < scaleMaxCalls && (i < scaleMinCalls || time.Now().Before(deadline)); i++ {
			if c.before != nil {
				if err := c.before(); err != nil {
					return nil, fmt.Errorf("%s: %w", c.name, err)
				}
			}
			var d time.Duration
			var err error
			for patience := time.Now().Add(5 * time.Second); ; {
				t0 := time.Now()
				err = c.call(i)
				d = time.Since(t0)
				if !errors.Is(err, errRetry) || time.Now().After(patience) {
					break
				}
			}
			lat = append(lat, d)
			switch {
			case err == nil:
			case isRefused(err):
				row.Refused++
			default:
				row.Errors++
				if row.FirstError == "" {
					row.FirstError = err.Error()
				}
			}
		}
		slices.Sort(lat)
		pct := func(p float64) float64 {
			return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
		}
		row.Calls, row.P50ms, row.P99ms = len(lat), pct(.5), pct(.99)
		fmt.Fprintf(os.Stderr, "  scale %8d notes  %-44s p50 %8.2f ms  p99 %8.2f ms  (%d calls, %d errors, %d refused)\n",
			n, c.name, row.P50ms, row.P99ms, row.Calls, row.Errors, row.Refused)
		out = append(out, row)
	}
	return out, nil
}

// printScale prints the scale section: each call at each note count, the
// ratio of the last count's p50 to the first's, and its errors and refusals
// at all counts.
func (r *report) printScale(w io.Writer) {
	if len(r.Scale) == 0 {
		return
	}
	var counts []int
	for _, d := range r.ScaleDatabase {
		counts = append(counts, d.Notes)
	}
	fmt.Fprintf(w, "\nscale: one call at a time over the spread (scale.go), p50 / p99 ms\n")
	for _, d := range r.ScaleDatabase {
		fmt.Fprintf(w, "  %d notes: database %.0f MB (notes %.0f MB, %d receipts %.0f MB), filled in %.0f s\n",
			d.Notes, d.DatabaseMB, d.NotesMB, d.Receipts, d.ReceiptsMB, d.FillSeconds)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "call\t"
	for _, n := range counts {
		head += fmt.Sprintf("%d notes\t", n)
	}
	fmt.Fprintln(tw, head+"p50 ratio\terrors\trefused\t")
	var names []string
	byCall := map[string]map[int]scaleRow{}
	for _, x := range r.Scale {
		if byCall[x.Call] == nil {
			byCall[x.Call] = map[int]scaleRow{}
			names = append(names, x.Call)
		}
		byCall[x.Call][x.Notes] = x
	}
	for _, name := range names {
		line := name + "\t"
		errs, refused := 0, 0
		for _, n := range counts {
			x := byCall[name][n]
			line += fmt.Sprintf("%.2f / %.2f\t", x.P50ms, x.P99ms)
			errs, refused = errs+x.Errors, refused+x.Refused
		}
		first, last := byCall[name][counts[0]], byCall[name][counts[len(counts)-1]]
		ratio := "-"
		if first.P50ms > 0 {
			ratio = fmt.Sprintf("%.2f×", last.P50ms/first.P50ms)
		}
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t\n", line, ratio, errs, refused)
	}
	tw.Flush()
	for _, x := range r.Scale {
		if x.FirstError != "" {
			fmt.Fprintf(w, "first error of scale %q at %d notes: %s\n", x.Call, x.Notes, x.FirstError)
		}
	}
}
