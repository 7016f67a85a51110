package mcp

import (
	"context"
	"log/slog"
)

// sdkLogger lowers the SDK's info lines (a session per call of a stateless
// server) to debug, so that the info log holds what the server itself says.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(infoAsDebug{log.Handler()})
}

type infoAsDebug struct{ h slog.Handler }

func (d infoAsDebug) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, lowered(l))
}

func (d infoAsDebug) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lowered(r.Level)
	return d.h.Handle(ctx, r)
}

func (d infoAsDebug) WithAttrs(as []slog.Attr) slog.Handler { return infoAsDebug{d.h.WithAttrs(as)} }
func (d infoAsDebug) WithGroup(name string) slog.Handler    { return infoAsDebug{d.h.WithGroup(name)} }

func lowered(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}
