package views

// Form holds a submitted form's values and its errors, so that a refused
// form is shown again as the owner filled it in.
type Form struct {
	Values map[string]string
	Errors FormErrors
}

// Value returns the submitted value of a field ("" when absent).
func (f Form) Value(field string) string { return f.Values[field] }

// HasErrors reports whether any field was refused.
func (f Form) HasErrors() bool { return len(f.Errors) > 0 }
