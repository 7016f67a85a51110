package web

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// Free tries of the password checks (store.ReserveAttempt): past them each try
// waits longer, a delay rather than a lockout that others could trigger.
const (
	// SignInFreeTries are per email from one address.
	SignInFreeTries = 5
	// SignInAddressFreeTries are per address: many emails still cost a hash each.
	SignInAddressFreeTries = 30
	// SetupFreeTries are per address, while no owner exists.
	SetupFreeTries = 10
	// PasswordFreeTries are per owner from one address.
	PasswordFreeTries = 5
)

// SignInKeys are the counters a sign-in try is reserved on.
func SignInKeys(email string) []store.AttemptKey {
	return []store.AttemptKey{{Email: email, FreeTries: SignInFreeTries}, {FreeTries: SignInAddressFreeTries}}
}

// RefuseAttempt sets Retry-After and says how long to wait.
func RefuseAttempt(c echo.Context, a store.Attempt) string {
	c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(a.Wait.Seconds()))))
	return "Too many failed attempts from your address. Try again in " + WaitWords(a.Wait) + "."
}

// TriesLeft says what the next try after a failed one may expect.
func TriesLeft(a store.Attempt) string {
	switch {
	case a.Wait > 0:
		return "Wait " + WaitWords(a.Wait) + " before the next try; each further miss doubles the wait."
	case a.Left == 1:
		return "1 try left before the next ones have to wait."
	default:
		return fmt.Sprintf("%d tries left before the next ones have to wait.", a.Left)
	}
}

// WaitWords is a wait in words: "30 seconds", "2 minutes".
func WaitWords(d time.Duration) string {
	if d < time.Minute {
		n := max(int(math.Ceil(d.Seconds())), 1)
		if n == 1 {
			return "1 second"
		}
		return strconv.Itoa(n) + " seconds"
	}
	n := int(math.Ceil(d.Minutes()))
	if n == 1 {
		return "1 minute"
	}
	return strconv.Itoa(n) + " minutes"
}
