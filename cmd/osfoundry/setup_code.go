package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

const setupCodeFile = "setup-code"

// setupCodeCheck is how often serve looks whether the first owner exists.
const setupCodeCheck = time.Second

// offerSetupCode makes the one-time code /setup asks for while no owner
// exists, so that a page reaching the server (DNS rebinding, a port left
// open) cannot create the first owner. It is logged and written to
// <data-dir>/setup-code; the returned background removes the file once an
// owner exists.
func offerSetupCode(ctx context.Context, st *store.Store, dataDir string, log *slog.Logger) (string, *background, error) {
	path := filepath.Join(dataDir, setupCodeFile)
	code := store.NewSetupCode()
	offered, err := st.AddSetupCode(ctx, code)
	if err != nil {
		return "", nil, err
	}
	if !offered {
		return "", nil, removeSetupCode(path)
	}
	if err := writeSetupCode(path, code); err != nil {
		// A data folder the server may not write (a read-only image) must
		// not keep it from starting: the code is in the log.
		log.Warn("the setup code could not be written to the data folder; it is in this log only", "err", err)
	}
	log.Warn("setup code: "+code, "file", path, "next", "open /setup and enter it to create the first owner account")
	watch := startBackground(ctx, func(ctx context.Context) {
		ctx = store.Background(ctx)
		t := time.NewTicker(setupCodeCheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if has, err := st.HasOwner(ctx); err != nil || !has {
				continue
			}
			if err := removeSetupCode(path); err != nil {
				log.Warn("the first owner exists, but the setup code file could not be removed", "file", path, "err", err)
			} else {
				log.Info("the first owner exists: setup code file removed", "file", path)
			}
			return
		}
	})
	return code, watch, nil
}

// writeSetupCode writes the code to a new file only its owner can read: a
// file (or link) already there is removed first, never written through.
func writeSetupCode(path, code string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o711); err != nil {
		return fmt.Errorf("setup code: %w", err)
	}
	if err := removeSetupCode(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("setup code: %w", err)
	}
	if _, err := fmt.Fprintln(f, code); err != nil {
		f.Close()
		return fmt.Errorf("setup code: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("setup code: %w", err)
	}
	return nil
}

func removeSetupCode(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("setup code: %w", err)
	}
	return nil
}
