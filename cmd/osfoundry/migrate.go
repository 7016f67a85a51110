package main

import (
	"context"
	"flag"
	"log/slog"
)

// migrateCommand is `osfoundry migrate`: apply the migrations and exit.
type migrateCommand struct{}

func (migrateCommand) flags(*flag.FlagSet) {}

func (migrateCommand) run(ctx context.Context, cfg config, log *slog.Logger) error {
	st, stopPG, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	st.Close()
	stopPG()
	return nil
}
