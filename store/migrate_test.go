package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMigrateFromEmptyAndAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := store.Migrations()
	if err != nil || len(all) == 0 {
		t.Fatalf("migrations: %v %d", err, len(all))
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) {
		t.Fatalf("applied %v, want all %d", applied, len(all))
	}
	again, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Fatalf("second run applied %v, want none", again)
	}
	v, err := st.SchemaVersion(ctx)
	if err != nil || v != all[len(all)-1].Version {
		t.Fatalf("version %d %v", v, err)
	}
}

func TestMigrateConcurrentStartsApplyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.NewEmptyDatabase(t)
	var wg sync.WaitGroup
	results := make([][]int, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := store.Open(ctx, dsn)
			if err != nil {
				errs[i] = err
				return
			}
			defer st.Close()
			results[i], errs[i] = st.Migrate(ctx)
		}()
	}
	wg.Wait()
	total := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		total += len(results[i])
	}
	all, _ := store.Migrations()
	if total != len(all) {
		t.Fatalf("migrations applied %d times in total, want %d", total, len(all))
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	storetest.SQL(t, st).Exec(`INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')`)
	_, err := st.Migrate(ctx)
	if err == nil || !strings.Contains(err.Error(), "9999") {
		t.Fatalf("want refusal naming version 9999, got %v", err)
	}
}

func TestMigrateAppliesAGapBelowTheNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	all, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	// Pretend the first migration was never recorded (as if it arrived later).
	first := all[0]
	storetest.SQL(t, st).Exec(`DELETE FROM schema_migrations WHERE version = $1`, first.Version)
	_, err = st.Migrate(ctx)
	// Re-running 001 on a built schema fails, which proves it was attempted.
	if err == nil || !strings.Contains(err.Error(), first.Name) {
		t.Fatalf("want an attempt to apply %s, got %v", first.Name, err)
	}
}
