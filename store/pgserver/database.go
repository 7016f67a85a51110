package pgserver

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// CreateDatabase creates name (from template, when given) unless it exists.
func (s *Server) CreateDatabase(ctx context.Context, name, template string) error {
	c, err := pgx.Connect(ctx, s.BaseDSN+" dbname=postgres")
	if err != nil {
		return fmt.Errorf("pgserver: connect: %w", err)
	}
	defer c.Close(ctx)
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("pgserver: look up database: %w", err)
	}
	if exists {
		return nil
	}
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := c.Exec(ctx, q); err != nil {
		return fmt.Errorf("pgserver: create database %s: %w", name, err)
	}
	return nil
}
