package main

import (
	"context"
	"log/slog"

	"github.com/osfoundry/osfoundry/push"
	"github.com/osfoundry/osfoundry/store"
)

// startPush starts the push sender, woken by l: call it before l runs.
func startPush(ctx context.Context, cfg config, keys *push.Keys, st *store.Store, l *store.Listener, log *slog.Logger) (stop func()) {
	opts := push.Options{Store: st, Keys: keys, Subject: push.Subject(cfg.baseURL), Logger: log, AllowPrivate: cfg.allowPrivate}
	if cfg.test.fastPush {
		log.Warn("push test timing in use: retries, leases and polls are shortened")
		opts = push.FastOptions(opts)
	}
	sender := push.New(opts)
	sender.WakeOn(l)
	return startBackground(ctx, sender.Run).stop
}
