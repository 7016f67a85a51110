package mcp

import (
	"regexp"
	"strings"
)

var (
	lengthDetail  = regexp.MustCompile(`^(maxLength|minLength): .* contains (\d+) Unicode code points, (?:more|fewer) than (\d+)$`)
	patternDetail = regexp.MustCompile(`^pattern: .* does not match regular expression (".*")$`)
)

// tidyValidation turns the go-sdk's nested schema-violation message
// ("validating \"arguments\": validating root: validating /properties/task:
// maxLength: \"…\" contains 281 Unicode code points, more than 280") into one
// sentence naming the field and the rule ("Invalid arguments: task: too
// long: 281 characters, at most 280"), without echoing long values back.
func tidyValidation(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, `validating "arguments": `)
	if !ok {
		return "", false
	}
	field := ""
	for strings.HasPrefix(rest, "validating ") {
		path, detail, ok := strings.Cut(strings.TrimPrefix(rest, "validating "), ": ")
		if !ok {
			break
		}
		field, rest = path, detail
	}
	field = strings.ReplaceAll(strings.TrimPrefix(field, "/properties/"), "/properties/", ".")
	if field == "root" {
		field = ""
	}
	var out string
	switch m := lengthDetail.FindStringSubmatch(rest); {
	case m != nil && m[1] == "maxLength":
		out = "too long: " + m[2] + " characters, at most " + m[3]
	case m != nil:
		out = "too short: " + m[2] + " characters, at least " + m[3]
	case patternDetail.MatchString(rest):
		out = "must match the pattern " + patternDetail.FindStringSubmatch(rest)[1]
	case strings.HasPrefix(rest, "unexpected additional properties "):
		out = "unexpected properties " + strings.TrimPrefix(rest, "unexpected additional properties ") + " (not in the schema; remove them)"
	case strings.HasPrefix(rest, "required: missing properties: "):
		out = "missing required properties " + strings.TrimPrefix(rest, "required: missing properties: ")
	default:
		out = rest
	}
	if field != "" {
		out = field + ": " + out
	}
	return "Invalid arguments: " + out, true
}
