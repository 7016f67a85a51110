package views

// Form holds a refused form's values and errors, to show it again as filled in.
type Form struct {
	Values map[string]string
	Errors FormErrors
}

// Value returns the submitted value of a field ("" when absent).
func (f Form) Value(field string) string { return f.Values[field] }

// HasErrors reports whether any field was refused.
func (f Form) HasErrors() bool { return len(f.Errors) > 0 }

// FormErrors maps a field name to its message.
type FormErrors map[string]string

// Has reports whether field has an error.
func (f FormErrors) Has(field string) bool { _, ok := f[field]; return ok }

// Invalid returns "true"/"false" for aria-invalid.
func (f FormErrors) Invalid(field string) string {
	if f.Has(field) {
		return "true"
	}
	return "false"
}
