package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"
)

// Standard Webhooks headers (https://www.standardwebhooks.com).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// MessageID is the same on every attempt, so a receiver can drop duplicates.
func MessageID(deliveryID int64) string { return "msg_" + strconv.FormatInt(deliveryID, 10) }

// Signature is the Standard Webhooks v1 HMAC-SHA256 of "<id>.<timestamp>.<body>".
func Signature(key []byte, msgID string, at time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// sign sets the three Standard Webhooks headers of an attempt made at at.
func sign(h http.Header, key []byte, msgID string, at time.Time, body []byte) {
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, Signature(key, msgID, at, body))
}
