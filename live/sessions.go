package live

// sessionTopic is one watched session: its streams, the newest note they
// were sent, and the presence sidebar last computed for them.
type sessionTopic struct {
	workspaceID   int64
	projectID     int64
	streams       map[*Stream]struct{}
	last          int64
	presence      string
	presenceEvent []byte
}

type sessionTopics map[int64]*sessionTopic

func (s sessionTopics) add(st *Stream, projectID, latest int64) (t *sessionTopic, first bool) {
	t = s[st.sessionID]
	if t == nil {
		t = &sessionTopic{workspaceID: st.workspaceID, projectID: projectID, streams: map[*Stream]struct{}{}, last: latest}
		s[st.sessionID] = t
		first = true
	}
	t.streams[st] = struct{}{}
	return t, first
}

func (s sessionTopics) remove(st *Stream) {
	if t := s[st.sessionID]; t != nil {
		delete(t.streams, st)
		if len(t.streams) == 0 {
			delete(s, st.sessionID)
		}
	}
}

func (s sessionTopics) byProject(workspaceID int64) map[int64][]int64 {
	projects := map[int64][]int64{}
	for sid, t := range s {
		if t.workspaceID == workspaceID {
			projects[t.projectID] = append(projects[t.projectID], sid)
		}
	}
	return projects
}

func (b *Broker) dropSession(sessionID int64, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.sessions[sessionID]; t != nil {
		for st := range t.streams {
			b.drop(st, why)
		}
	}
}
