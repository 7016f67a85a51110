package main

import (
	"context"
	"log/slog"

	"github.com/osfoundry/osfoundry/email"
	"github.com/osfoundry/osfoundry/store"
)

// questionEmail composes a question's email; nil when email is off.
func questionEmail(cfg config) store.ComposeQuestionEmail {
	if cfg.smtp == nil {
		return nil
	}
	return email.Composer{BaseURL: cfg.baseURL}.Question
}

// approvalEmail composes an approval's email; nil when email is off.
func approvalEmail(cfg config) store.ComposeApprovalEmail {
	if cfg.smtp == nil {
		return nil
	}
	return email.Composer{BaseURL: cfg.baseURL}.Approval
}

// inviteEmail mails invitations of people at once; nil when email is off.
func inviteEmail(cfg config) func(context.Context, *store.PersonInvite, string) error {
	if cfg.smtp == nil {
		return nil
	}
	return email.InviteSender(*cfg.smtp, email.Composer{BaseURL: cfg.baseURL})
}

// startEmail starts, when SMTP is configured, the email sender (woken by l,
// so call it before l runs) and the sweeps that queue replies and digests.
func startEmail(ctx context.Context, cfg config, st *store.Store, l *store.Listener, log *slog.Logger) (stop func()) {
	if cfg.smtp == nil {
		return func() {}
	}
	opts := email.Options{Store: st, SMTP: *cfg.smtp, Logger: log}
	if cfg.test.fastEmail {
		log.Warn("email test timing in use: retries, leases and sweeps are shortened")
		opts = email.FastOptions(opts)
	}
	sender := email.New(opts, email.Composer{BaseURL: cfg.baseURL})
	sender.WakeOn(l)
	sending := startBackground(ctx, sender.Run)
	sweeping := startBackground(ctx, sender.RunSweeps)
	return func() {
		sweeping.stop()
		sending.stop()
	}
}
