package handlers

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// formOf collects the named fields of a submitted form.
func formOf(c echo.Context, fields ...string) views.Form {
	f := views.Form{Values: map[string]string{}}
	for _, k := range fields {
		f.Values[k] = c.FormValue(k)
	}
	return f
}

// fieldErrors turns a store.FieldError into form errors; other errors are
// returned as they are.
func fieldErrors(err error) (views.FormErrors, error) {
	var fe *store.FieldError
	if errors.As(err, &fe) {
		return views.FormErrors{fe.Field: fe.Message}, nil
	}
	return nil, err
}
