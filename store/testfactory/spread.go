package testfactory

import (
	"context"
	"fmt"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// SpreadOpts shapes a Spread; a zero field takes its default (the bench's
// scale scenario: 20 workspaces, 3,000 sessions, 400 agents).
type SpreadOpts struct {
	// Name tells this spread's owners, workspaces and handles from others'.
	Name string
	// Password is every owner's; Resource the MCP resource the agents'
	// tokens are for, which live for TokenTTL (default an hour).
	Password string
	Resource string
	TokenTTL time.Duration
	// Workspaces, and per workspace Projects, Sessions and Agents.
	Workspaces, Projects, Sessions, Agents int
	// BusyEvery: one session in BusyEvery is busy (default 20).
	BusyEvery int
	// An agent is invited to MinInvitations to MaxInvitations consecutive
	// sessions of its workspace (default 5 and 50).
	MinInvitations, MaxInvitations int
	// Notes is the timeline's length, the largest count Fill is given
	// (default: the first): its notes are 2.5 s apart and end now.
	Notes int
	// Log, when set, hears the progress of the slow steps.
	Log func(format string, args ...any)
}

func (o SpreadOpts) withDefaults() SpreadOpts {
	o.TokenTTL = valOrDefault(o.TokenTTL, time.Hour)
	o.Workspaces = valOrDefault(o.Workspaces, 20)
	o.Projects = valOrDefault(o.Projects, 5)
	o.Sessions = valOrDefault(o.Sessions, 150)
	o.Agents = valOrDefault(o.Agents, 20)
	o.BusyEvery = valOrDefault(o.BusyEvery, 20)
	o.MinInvitations = valOrDefault(o.MinInvitations, 5)
	o.MaxInvitations = valOrDefault(o.MaxInvitations, 50)
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	return o
}

// Spread is workspaces of their own, each with one owner, projects,
// sessions (one in BusyEvery busy: 7 notes in 10 go to busy sessions) and
// agents seated in two projects, invited to consecutive sessions, a status
// set. Seven agents in ten keep up with their mail; the others fall far
// behind. In workspace 0, Agents[0] is invited to MaxInvitations sessions
// from Sessions[0] (busy) and falls behind, Agents[1] to MinInvitations
// and keeps up; Sessions[1] is quiet.
type Spread struct {
	Owners   []Owner
	Sessions []Session
	Agents   []Agent

	opts SpreadOpts
	db   DB
	tl   timeline
}

// Owner is a workspace's owner and its projects.
type Owner struct {
	ID, WorkspaceID int64
	Email, Name     string
	Projects        []int64
}

// Agent is a connection with a claimed profile and a token.
type Agent struct {
	ConnectionID int64
	Token        string
	Profile      *store.Profile
	// KeepsUp: its read marks follow every fill; else they stop a tenth
	// into its sessions' first notes and never move.
	KeepsUp bool
}

// Session is a session of the spread.
type Session struct {
	*store.Session
	Owner int // in Spread.Owners
	Busy  bool
	// NeverRead: a busy session its owner never opened (every other one,
	// never Sessions[0]), its whole backlog unread.
	NeverRead bool
	Invited   []int // in Spread.Agents
}

// NewSpread makes the spread's owners, projects, sessions, agents,
// invitations and statuses; Fill writes its notes.
func NewSpread(ctx context.Context, st *store.Store, db DB, opts SpreadOpts) (*Spread, error) {
	o := opts.withDefaults()
	sp := &Spread{opts: o, db: db, tl: timeline{start: time.Now(), total: o.Notes}}
	o.Log("creating %d workspaces, %d sessions, %d agents …", o.Workspaces, o.Workspaces*o.Sessions, o.Workspaces*o.Agents)
	for w := range o.Workspaces {
		if err := sp.addWorkspace(ctx, st, w); err != nil {
			return nil, fmt.Errorf("testfactory: spread: %w", err)
		}
	}
	if err := sp.invite(ctx); err != nil {
		return nil, fmt.Errorf("testfactory: invitations: %w", err)
	}
	// Agents of a workspace share a few repositories and branches.
	for _, a := range sp.Agents {
		id := a.ConnectionID
		repo, branch, task := fmt.Sprintf("https://github.com/acme/repo-%d.git", id%7), fmt.Sprintf("feature/%d", id%11), fmt.Sprintf("Working on step %d", id)
		u := store.StatusUpdate{Repo: store.StatusField{Set: true, Value: &repo}, Branch: store.StatusField{Set: true, Value: &branch},
			Task: store.StatusField{Set: true, Value: &task}}
		if _, err := st.SetStatus(ctx, a.Profile.WorkspaceID, id, u); err != nil {
			return nil, fmt.Errorf("testfactory: status: %w", err)
		}
	}
	return sp, nil
}

// addWorkspace makes workspace w: its owner, projects, sessions and agents.
func (sp *Spread) addWorkspace(ctx context.Context, st *store.Store, w int) error {
	o := sp.opts
	email := fmt.Sprintf("%s-%d@example.com", o.Name, w)
	owner, err := st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: fmt.Sprintf("Scale owner %d", w), Password: o.Password,
		WorkspaceName: fmt.Sprintf("%s-%d", o.Name, w)})
	if err != nil {
		return err
	}
	ws := owner.WorkspaceID
	ow := Owner{ID: owner.ID, WorkspaceID: ws, Email: email, Name: owner.DisplayName}
	for p := range o.Projects {
		pr, err := st.CreateProject(ctx, ws, fmt.Sprintf("Scale %d.%d", w, p))
		if err != nil {
			return err
		}
		ow.Projects = append(ow.Projects, pr.ID)
	}
	sp.Owners = append(sp.Owners, ow)
	for i := range o.Sessions {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: ow.Projects[i%o.Projects],
			Type: store.SessionTypes[i%len(store.SessionTypes)], Title: fmt.Sprintf("Scale %d.%d", w, i), CreatedBy: owner.ID})
		if err != nil {
			return err
		}
		busy := i%o.BusyEvery == 0
		sp.Sessions = append(sp.Sessions, Session{Session: s, Owner: w, Busy: busy, NeverRead: busy && i%(2*o.BusyEvery) == o.BusyEvery})
	}
	for a := range o.Agents {
		seated := []int64{ow.Projects[a%o.Projects], ow.Projects[(a+1)%o.Projects]}
		conn, token, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner.ID,
			ClientName: "scale bench", Scopes: store.AllScopes, ProjectIDs: seated}, o.Resource, o.TokenTTL)
		if err != nil {
			return err
		}
		p, err := st.ClaimProfile(ctx, ws, conn.ID, fmt.Sprintf("scale-%d-%d", w, a), fmt.Sprintf("Scale agent %d.%d", w, a))
		if err != nil {
			return err
		}
		keeps := a%10 < 7
		if w == 0 && a < 2 {
			keeps = a == 1 // the measured pair: Agents[0] behind, Agents[1] keeping up
		}
		sp.Agents = append(sp.Agents, Agent{ConnectionID: conn.ID, Token: token, Profile: p, KeepsUp: keeps})
	}
	return nil
}

// invite invites agent a of each workspace to 5…50 consecutive sessions of
// it from an offset of its own, one invitation in five as runner, in one
// statement (Invite's rule without its events: nothing measured reads them).
func (sp *Spread) invite(ctx context.Context) error {
	o := sp.opts
	var sessions, conns []int64
	for w := range o.Workspaces {
		for a := range o.Agents {
			n := o.MinInvitations + (a*13)%(o.MaxInvitations-o.MinInvitations+1)
			offset := (a * 37) % o.Sessions
			switch {
			case w == 0 && a == 0:
				n, offset = o.MaxInvitations, 0
			case w == 0 && a == 1:
				n, offset = o.MinInvitations, 0
			}
			n = min(n, o.Sessions)
			ag := w*o.Agents + a
			for k := range n {
				si := w*o.Sessions + (offset+k)%o.Sessions
				sessions, conns = append(sessions, sp.Sessions[si].ID), append(conns, sp.Agents[ag].ConnectionID)
				sp.Sessions[si].Invited = append(sp.Sessions[si].Invited, ag)
			}
		}
	}
	_, err := sp.db.Exec(ctx, `
		INSERT INTO invitations (workspace_id, session_id, connection_id, role)
		SELECT s.workspace_id, s.id, c.id, CASE WHEN x.i % 5 = 0 THEN $3 ELSE $4 END
		FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS x(session, conn, i)
		JOIN sessions s ON s.id = x.session
		JOIN connections c ON c.id = x.conn AND c.workspace_id = s.workspace_id AND c.revoked_at IS NULL
		ON CONFLICT DO NOTHING`, sessions, conns, store.RoleRunner, store.RoleContributor)
	return err
}
