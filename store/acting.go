package store

import (
	"context"
	"strconv"
	"time"
)

// CreateProjectAs creates a project; admins only.
func (s *Store) CreateProjectAs(ctx context.Context, a Actor, name string) (*Project, error) {
	var p *Project
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var err error
		if p, err = s.createProjectIn(ctx, ac.tx, a.WorkspaceID, name); err != nil {
			return err
		}
		ac.audit(AuditProjectCreated, p.ID, p.Name, nil)
		return nil
	})
	return p, wrapAct("create project", err)
}

// RenameProjectAs renames a project; admins only.
func (s *Store) RenameProjectAs(ctx context.Context, a Actor, id int64, name string) (*Project, error) {
	var p *Project
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var err error
		if p, err = s.renameProjectIn(ctx, ac.tx, a.WorkspaceID, id, name); err != nil {
			return err
		}
		ac.audit(AuditProjectRenamed, p.ID, p.Name, nil)
		return nil
	})
	return p, wrapAct("rename project", err)
}

// SetProjectQuestionSettingsAs changes a project's question settings;
// admins only.
func (s *Store) SetProjectQuestionSettingsAs(ctx context.Context, a Actor, projectID int64, q QuestionSettings) error {
	return wrapAct("set project question settings", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		if err := s.setProjectQuestionSettingsIn(ctx, ac.tx, a.WorkspaceID, projectID, q); err != nil {
			return err
		}
		ac.audit(AuditProjectSettings, projectID, "question delays and expiry",
			map[string]any{"blocking_minutes": q.BlockingMinutes, "normal_minutes": q.NormalMinutes, "expiry_hours": q.ExpiryHours})
		return nil
	}))
}

// SeatAgentByHandleAs seats an agent in a project; admins only.
func (s *Store) SeatAgentByHandleAs(ctx context.Context, a Actor, projectID int64, handle string) error {
	return wrapAct("seat agent", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		if err := s.seatAgentByHandleIn(ctx, ac.tx, a.WorkspaceID, projectID, handle); err != nil {
			return err
		}
		ac.audit(AuditAgentSeated, projectID, handle, nil)
		return nil
	}))
}

// UnseatConnectionAs removes a connection from a project; admins only.
func (s *Store) UnseatConnectionAs(ctx context.Context, a Actor, projectID, connectionID int64) error {
	return wrapAct("unseat connection", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		if err := s.unseatConnectionIn(ctx, ac.tx, a.WorkspaceID, projectID, connectionID); err != nil {
			return err
		}
		ac.audit(AuditAgentUnseated, projectID, "connection "+strconv.FormatInt(connectionID, 10), map[string]any{"connection_id": connectionID})
		return nil
	}))
}

// CreateWebhookEndpointAs adds a webhook endpoint; admins only.
func (s *Store) CreateWebhookEndpointAs(ctx context.Context, a Actor, in NewWebhookEndpoint) (*WebhookEndpoint, string, error) {
	in.WorkspaceID = a.WorkspaceID
	var e *WebhookEndpoint
	var secret string
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var err error
		if e, secret, err = s.createWebhookEndpointIn(ctx, ac.tx, in); err != nil {
			return err
		}
		ac.audit(AuditWebhookCreated, e.ProjectID, e.URL, map[string]any{"endpoint_id": e.ID, "kind": e.Kind, "fires": e.Fires})
		return nil
	})
	return e, secret, wrapAct("create webhook", err)
}

// SetWebhookEndpointEnabledAs enables or disables an endpoint; admins only.
func (s *Store) SetWebhookEndpointEnabledAs(ctx context.Context, a Actor, projectID, id int64, enabled bool) error {
	return wrapAct("enable webhook", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		if err := s.setWebhookEndpointEnabledIn(ctx, ac.tx, a.WorkspaceID, projectID, id, enabled); err != nil {
			return err
		}
		kind := AuditWebhookDisabled
		if enabled {
			kind = AuditWebhookEnabled
		}
		ac.audit(kind, projectID, "endpoint "+strconv.FormatInt(id, 10), map[string]any{"endpoint_id": id})
		return nil
	}))
}

// DeleteWebhookEndpointAs deletes an endpoint; admins only.
func (s *Store) DeleteWebhookEndpointAs(ctx context.Context, a Actor, projectID, id int64) error {
	return wrapAct("delete webhook", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var url string
		if err := ac.tx.QueryRow(ctx, `SELECT url FROM webhook_endpoints WHERE workspace_id = $1 AND project_id = $2 AND id = $3`,
			a.WorkspaceID, projectID, id).Scan(&url); err != nil {
			return err
		}
		if err := s.deleteWebhookEndpointIn(ctx, ac.tx, a.WorkspaceID, projectID, id); err != nil {
			return err
		}
		ac.audit(AuditWebhookDeleted, projectID, url, map[string]any{"endpoint_id": id})
		return nil
	}))
}

// QueueWebhookTestAs queues a test delivery; admins only.
func (s *Store) QueueWebhookTestAs(ctx context.Context, a Actor, projectID, id int64) error {
	return wrapAct("queue webhook test", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		return s.queueWebhookTestIn(ctx, ac.tx, a.WorkspaceID, projectID, id)
	}))
}

// RetryWebhookDeliveryAs puts a failed delivery back in the outbox; admins
// only.
func (s *Store) RetryWebhookDeliveryAs(ctx context.Context, a Actor, projectID, endpointID, deliveryID int64) error {
	return wrapAct("retry webhook delivery", s.act(ctx, a, RoleAdmin, func(ac *action) error {
		return s.retryWebhookDeliveryIn(ctx, ac.tx, a.WorkspaceID, projectID, endpointID, deliveryID)
	}))
}

// SetEmailSettingsAs records the actor's own email settings; every role.
func (s *Store) SetEmailSettingsAs(ctx context.Context, a Actor, m EmailSettings) error {
	return wrapAct("set mail settings", s.act(ctx, a, RoleViewer, func(ac *action) error {
		if err := s.setEmailSettingsIn(ctx, ac.tx, a.WorkspaceID, a.OwnerID, m); err != nil {
			return err
		}
		ac.audit(AuditEmailSettings, 0, "own email settings", map[string]any{"questions": m.Questions, "replies": m.Replies, "digest": m.Digest})
		return nil
	}))
}

// ExportSessionMailAs is ExportSessionMail with its audit row, read in the same transaction; every
// role exports.
func (s *Store) ExportSessionMailAs(ctx context.Context, a Actor, session *Session, format string, each func(*Note) error) error {
	return s.act(ctx, a, RoleViewer, func(ac *action) error {
		if err := s.exportSessionMailIn(ctx, ac.tx, a.WorkspaceID, session.ID, each); err != nil {
			return err
		}
		ac.audit(AuditSessionExported, session.ProjectID, session.Title, map[string]any{"session_id": session.ID, "format": format})
		return nil
	})
}

// CreateSessionAs creates a session; members and admins.
func (s *Store) CreateSessionAs(ctx context.Context, a Actor, n NewSession) (*Session, error) {
	n.WorkspaceID, n.CreatedBy = a.WorkspaceID, a.OwnerID
	var session *Session
	err := s.act(ctx, a, RoleMember, func(ac *action) error {
		var err error
		session, err = s.createSessionIn(ctx, ac.tx, n)
		return err
	})
	return session, wrapAct("create session", err)
}

// InviteAs invites a connection to a session, or changes its role;
// members and admins.
func (s *Store) InviteAs(ctx context.Context, a Actor, sessionID, connectionID int64, role string) error {
	if role != RoleContributor && role != RoleRunner {
		return &FieldError{"role", "choose contributor or runner"}
	}
	return wrapAct("invite", s.act(ctx, a, RoleMember, func(ac *action) error {
		return invite(ctx, ac.tx, a.WorkspaceID, sessionID, connectionID, role, false)
	}))
}

// RemoveInvitationAs removes a connection from a session; members and
// admins.
func (s *Store) RemoveInvitationAs(ctx context.Context, a Actor, sessionID, connectionID int64) error {
	return wrapAct("remove invitation", s.act(ctx, a, RoleMember, func(ac *action) error {
		return removeInvitation(ctx, ac.tx, a.WorkspaceID, sessionID, connectionID)
	}))
}

// CreateTokenConnectionAs creates a connection of the actor with its first access token (the
// Connections page's static token).
func (s *Store) CreateTokenConnectionAs(ctx context.Context, a Actor, n NewConnection, resource string, ttl time.Duration) (*Connection, string, time.Time, error) {
	n.WorkspaceID, n.OwnerID = a.WorkspaceID, a.OwnerID
	scopes, err := ValidateScopes(n.Scopes)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	var c *Connection
	err = s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var err error
		if c, err = insertConnection(ctx, ac.tx, n, scopes); err != nil {
			return err
		}
		if err := seatConnection(ctx, ac.tx, n.WorkspaceID, c.ID, n.ProjectIDs); err != nil {
			return err
		}
		ac.audit(AuditConnGranted, 0, c.ClientName, map[string]any{"connection_id": c.ID, "scopes": c.Scopes, "static_token": true})
		return nil
	})
	if err != nil {
		return nil, "", time.Time{}, wrapAct("create connection", err)
	}
	token, expires, err := s.MintAccessToken(ctx, c.ID, resource, c.Scopes, ttl)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	return c, token, expires, nil
}
