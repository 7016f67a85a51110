package mcp

import (
	"regexp"
	"strings"
)

// sdkViolation matches the innermost part of a go-sdk schema-violation
// message: the property path and the failed keyword with its detail.
var sdkViolation = regexp.MustCompile(`validating (/properties/[^:]+|root): ([a-zA-Z]+)(?:: (.*))?$`)

// tidyValidation turns the go-sdk's nested "validating \"arguments\": …"
// message into "Invalid arguments: <field>: <rule>", naming the field and
// the rule without echoing long argument values back.
func tidyValidation(msg string) (string, bool) {
	if !strings.HasPrefix(msg, `validating "arguments": `) {
		return "", false
	}
	line := msg
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	m := sdkViolation.FindStringSubmatch(line)
	if m == nil {
		return "Invalid arguments: " + strings.TrimPrefix(msg, `validating "arguments": `), true
	}
	field := strings.TrimPrefix(m[1], "/properties/")
	keyword, detail := m[2], m[3]
	switch keyword {
	case "maxLength":
		// `"…" contains 281 Unicode code points, more than 280`
		if i := strings.LastIndex(detail, " contains "); i >= 0 {
			detail = strings.TrimSpace(detail[i:])
		}
		return "Invalid arguments: " + field + ": too long; it " + detail + " characters", true
	case "pattern":
		if i := strings.LastIndex(detail, "does not match"); i >= 0 {
			detail = detail[i:]
		}
		return "Invalid arguments: " + field + ": " + detail, true
	case "unexpected":
		return "Invalid arguments: " + keyword + " " + detail + "; remove them", true
	}
	if field == "root" {
		return "Invalid arguments: " + keyword + ": " + detail, true
	}
	return "Invalid arguments: " + field + ": " + keyword + ": " + detail, true
}
