package web

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// Form collects the named fields of a submitted form.
func Form(c echo.Context, fields ...string) views.Form {
	f := views.Form{Values: map[string]string{}}
	for _, k := range fields {
		f.Values[k] = c.FormValue(k)
	}
	return f
}

// FieldErrors turns err's store.FieldErrors into form errors; an error with
// none is returned as it is.
func FieldErrors(err error) (views.FormErrors, error) {
	if fe := FormErrors(err); fe != nil {
		return fe, nil
	}
	return nil, err
}

// FormErrors is err's store.FieldErrors as form errors (nil when none).
func FormErrors(err error) views.FormErrors {
	fes := store.FieldErrorsOf(err)
	if len(fes) == 0 {
		return nil
	}
	out := views.FormErrors{}
	for _, fe := range fes {
		if _, ok := out[fe.Field]; !ok {
			out[fe.Field] = fe.Message
		}
	}
	return out
}
