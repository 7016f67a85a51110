package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// argumentsSchema checks a tool's arguments against the input schema
// tools/list sends and words each violation by argument and rule, never
// echoing long values back.
type argumentsSchema struct {
	schema *jsonschema.Schema
}

func compileArguments(tool string, raw json.RawMessage) *argumentsSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		panic(fmt.Sprintf("mcp: %s: input schema: %v", tool, err))
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:osfoundry:tool:" + tool
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("mcp: %s: input schema: %v", tool, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("mcp: %s: input schema: %v", tool, err))
	}
	return &argumentsSchema{schema: s}
}

// check returns "" when args (absent means {}) satisfy the schema, else the
// sentence an agent reads.
func (a *argumentsSchema) check(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return "Invalid arguments: not valid JSON"
	}
	err = a.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return ""
	}
	if !errors.As(err, &ve) {
		return "Invalid arguments: " + err.Error()
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	slices.SortStableFunc(leaves, func(x, y *jsonschema.ValidationError) int {
		return slices.Compare(x.InstanceLocation, y.InstanceLocation)
	})
	msgs := make([]string, 0, len(leaves))
	for _, l := range leaves {
		msg := violation(l.ErrorKind)
		if len(l.InstanceLocation) > 0 {
			msg = strings.Join(l.InstanceLocation, ".") + ": " + msg
		}
		if !slices.Contains(msgs, msg) {
			msgs = append(msgs, msg)
		}
	}
	return "Invalid arguments: " + strings.Join(msgs, "; ")
}

// collectLeaves gathers the errors without causes; the others only group them.
func collectLeaves(ve *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(ve.Causes) == 0 {
		*out = append(*out, ve)
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, out)
	}
}

func violation(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.MaxLength:
		return fmt.Sprintf("too long: %d characters, at most %d", k.Got, k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("too short: %d characters, at least %d", k.Got, k.Want)
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %q", k.Want)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprintf("%q", fmt.Sprint(w))
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Type:
		return fmt.Sprintf("must be %s, not %s", orList(k.Want), article(k.Got))
	case *kind.MaxItems:
		return fmt.Sprintf("too many: %d items, at most %d", k.Got, k.Want)
	case *kind.Minimum:
		return "must be at least " + ratString(k.Want)
	case *kind.Maximum:
		return "must be at most " + ratString(k.Want)
	case *kind.Required:
		return "missing required properties " + quotedList(k.Missing)
	case *kind.AdditionalProperties:
		return "unexpected properties " + quotedList(k.Properties) + " (not in the schema; remove them)"
	}
	return "breaks the schema rule " + strings.Join(k.KeywordPath(), "/")
}

func quotedList(names []string) string {
	b, _ := json.Marshal(names)
	return string(b)
}

func orList(types []string) string {
	var words []string
	for _, t := range types {
		if t != "null" {
			words = append(words, article(t))
		}
	}
	if slices.Contains(types, "null") {
		words = append(words, "null")
	}
	return strings.Join(words, " or ")
}

func article(jsonType string) string {
	switch jsonType {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + jsonType
	}
	return "a " + jsonType
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(3)
}
