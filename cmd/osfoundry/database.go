package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/pgserver"
)

// openDatabase connects to DATABASE_URL or starts the private cluster, then
// applies migrations. The returned func stops the private cluster.
func openDatabase(ctx context.Context, cfg config, log *slog.Logger) (*store.Store, func(), error) {
	dsn := cfg.databaseURL
	stopPG := func() {}
	if dsn == "" {
		if err := os.MkdirAll(cfg.dataDir, 0o711); err != nil {
			return nil, nil, fmt.Errorf("create data folder: %w", err)
		}
		start := time.Now()
		pg, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(cfg.dataDir, "pg"), Logger: log})
		if err != nil {
			return nil, nil, err
		}
		log.Info("private PostgreSQL started", "took", time.Since(start).Round(time.Millisecond))
		dsn = pg.DSN
		stopPG = pg.Stop
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		stopPG()
		return nil, nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		stopPG()
		return nil, nil, err
	}
	if len(applied) > 0 {
		log.Info("migrations applied", "versions", applied)
	}
	return st, stopPG, nil
}
