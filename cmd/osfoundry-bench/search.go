package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// The search scenarios (--search-notes N): an owner's workspace of its own
// with N notes, and the owner's /search over them, by words as rare as one
// note in 100,000 and as common as three in ten, with and without filters.
// Filling the workspace takes minutes for a million notes, so it runs only
// when asked for.

// searchPrefix starts the names of the search scenarios.
const searchPrefix = "search"

// Words the fixture's bodies carry at known rates, besides the vocabulary.
const (
	searchRare   = "zebracorn"    // one note in 100,000
	searchMedium = "orders_total" // one in 100
	searchCommon = "deploy"       // three in 10
)

// searchFixture is the search workspace: its signed-in owner and what the
// queries name.
type searchFixture struct {
	owner  *http.Client
	handle string // an agent of the workspace
}

// prepareSearch fills a workspace of its own with n notes, in 4 projects of
// 10 sessions each, from 4 agents (and one note in ten from the owner:
// replies, analysis), bodies of about 30 words drawn from a skewed
// vocabulary of 5,000, then VACUUM ANALYZE as autovacuum would; and signs
// its owner in. Sessions, senders and the words of known rates follow
// different strides of the note's number, so that no filter and word go
// together by construction.
func (fx *fixture) prepareSearch(ctx context.Context, st *store.Store, pool *pgxpool.Pool, n int) error {
	start := time.Now()
	email := "search-" + fx.runID + "@example.com"
	password := "search password " + fx.runID
	owner, err := st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: "Search owner", Password: password, WorkspaceName: "search-" + fx.runID})
	if err != nil {
		return err
	}
	ws := owner.WorkspaceID
	var sessions []int64
	var projects []int64
	for p := range 4 {
		project, err := st.CreateProject(ctx, ws, fmt.Sprintf("Search %d", p+1))
		if err != nil {
			return err
		}
		projects = append(projects, project.ID)
		for i := range 10 {
			s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: project.ID, Type: "team_session",
				Title: fmt.Sprintf("Search %d.%d", p+1, i+1), CreatedBy: owner.ID})
			if err != nil {
				return err
			}
			sessions = append(sessions, s.ID)
		}
	}
	var agents []*store.Profile
	for i := range 4 {
		conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner.ID, ClientName: "search bench",
			Scopes: store.AllScopes, ProjectIDs: projects})
		if err != nil {
			return err
		}
		p, err := st.ClaimProfile(ctx, ws, conn.ID, fmt.Sprintf("search-agent-%d", i+1), fmt.Sprintf("Search agent %d", i+1))
		if err != nil {
			return err
		}
		agents = append(agents, p)
	}
	if err := testfactory.Corpus(ctx, pool, testfactory.CorpusOpts{WorkspaceID: ws, OwnerID: owner.ID, OwnerName: owner.DisplayName,
		Sessions: sessions, Agents: agents, Notes: n, Rare: searchRare, Medium: searchMedium, Common: searchCommon,
		Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "  search fixture: "+format+"\n", args...) }}); err != nil {
		return fmt.Errorf("search fixture: %w", err)
	}
	fmt.Fprintf(os.Stderr, "  search fixture: %d notes written and vacuumed in %.0f s\n", n, time.Since(start).Seconds())
	c, err := fx.login(email, password)
	if err != nil {
		return err
	}
	fx.search = &searchFixture{owner: c, handle: "search-agent-2"}
	return nil
}

// searchScenarios are the searches over the search workspace.
func (fx *fixture) searchScenarios() []scenario {
	if fx.search == nil {
		return nil
	}
	var out []scenario
	for _, q := range []struct{ name, q string }{
		{"rare word (1 in 100,000)", searchRare},
		{"word in 1 note of 100", searchMedium},
		{"word in 3 notes of 10", searchCommon},
		{"two words", searchCommon + " w7"},
		{"phrase", `"` + searchMedium + ` rounds"`},
		{"from: and a word", "from:" + fx.search.handle + " " + searchMedium},
		{"project: and a word", `project:"Search 3" ` + searchCommon},
		{"type:analysis and a word", "type:analysis " + searchMedium},
		{"no match", "nothingmatchesthis"},
	} {
		path := fx.url + "/search?" + url.Values{"q": {q.q}}.Encode()
		out = append(out, scenario{name: searchPrefix + ": " + q.name, call: func(w, i int) error { return fx.searchOnce(path) }})
	}
	return out
}

// searchOnce runs one search as the search workspace's owner: 200 and a
// page; a 429 is refused.
func (fx *fixture) searchOnce(path string) error {
	res, err := fx.search.owner.Get(path)
	if err != nil {
		return err
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err := pageRefusal(res.Request.URL.Path, res.StatusCode); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return errors.New("search answered " + strconv.Itoa(res.StatusCode))
	}
	if n == 0 {
		return errors.New("search answered an empty page")
	}
	return nil
}
