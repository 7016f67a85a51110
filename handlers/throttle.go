package handlers

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// The free tries of each throttled password check (store.ReserveAttempt),
// after which each try waits longer than the one before: a delay on one
// email from one address, not a lockout, so that no one can lock an owner
// out from elsewhere.
const (
	// signInFreeTries: per email from one address.
	signInFreeTries = 5
	// signInAddressFreeTries: per address, whatever the email (an address
	// trying many emails still makes the server hash a password each time).
	signInAddressFreeTries = 30
	// setupFreeTries: per address, while no owner exists.
	setupFreeTries = 10
	// passwordFreeTries: current-password checks of the account page, per
	// owner from one address.
	passwordFreeTries = 5
)

// signInKeys are the counters a sign-in try is reserved on.
func signInKeys(email string) []store.AttemptKey {
	return []store.AttemptKey{{Email: email, FreeTries: signInFreeTries}, {FreeTries: signInAddressFreeTries}}
}

// refuseAttempt sets Retry-After on an answer to a try the throttle
// refused and returns the sentence that says how long to wait.
func refuseAttempt(c echo.Context, a store.Attempt) string {
	c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(a.Wait.Seconds()))))
	return "Too many failed attempts from your address. Try again in " + waitWords(a.Wait) + "."
}

// triesLeft says what the next try after a failed one may expect.
func triesLeft(a store.Attempt) string {
	switch {
	case a.Wait > 0:
		return "Wait " + waitWords(a.Wait) + " before the next try; each further miss doubles the wait."
	case a.Left == 1:
		return "1 try left before the next ones have to wait."
	default:
		return fmt.Sprintf("%d tries left before the next ones have to wait.", a.Left)
	}
}

// waitWords is a wait in words: "30 seconds", "2 minutes".
func waitWords(d time.Duration) string {
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
