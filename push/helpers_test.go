package push_test

import (
	"encoding/base64"
	"strconv"
)

func pushtestDecode(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
