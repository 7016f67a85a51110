package handlers

import (
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

// fieldErrors turns the store.FieldErrors in err into form errors, every
// refused field at once; an error that holds none is returned as it is.
func fieldErrors(err error) (views.FormErrors, error) {
	if fe := formErrors(err); fe != nil {
		return fe, nil
	}
	return nil, err
}

// formErrors is the form errors of the store.FieldErrors in err (nil when
// it holds none); a field refused twice shows its first message.
func formErrors(err error) views.FormErrors {
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
