package handlers

import (
	"bufio"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// auditExport streams the filtered audit log as JSON Lines, newest first.
func (s *Server) auditExport(c echo.Context) error {
	f, err := auditFilter(c)
	if err != nil {
		return err
	}
	f.Limit = -1
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/jsonl; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="audit-`+time.Now().UTC().Format("20060102-150405")+`.jsonl"`)
	h.Set("Cache-Control", "no-store")
	w := bufio.NewWriter(c.Response())
	started := false
	err = s.store.EachAudit(c.Request().Context(), web.Actor(c), f, func(e *store.AuditEntry) error {
		if !started {
			c.Response().WriteHeader(http.StatusOK)
			started = true
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	})
	if err != nil && !started {
		return err
	}
	if err != nil {
		s.log.Warn("audit export: ended early", "err", err)
		return nil
	}
	if !started {
		c.Response().WriteHeader(http.StatusOK)
	}
	return w.Flush()
}
