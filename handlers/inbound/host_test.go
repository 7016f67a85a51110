package inbound

import "testing"

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost:8080": true, "127.0.0.1": true, "127.0.0.1:8080": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "[::1]:8080": true, "::ffff:127.0.0.1": true,
		"localhost.evil.example": false, "example.com:8080": false, "10.0.0.1": false, "[::2]:80": false, "": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	for _, c := range []struct {
		public, host string
		want         bool
	}{
		{"foundry.example.com", "foundry.example.com", true},
		{"foundry.example.com", "Foundry.Example.COM", true},
		{"foundry.example.com:8443", "foundry.example.com:8443", true},
		{"foundry.example.com:8443", "foundry.example.com", false},
		{"foundry.example.com", "127.0.0.1:8080", true},
		{"foundry.example.com", "localhost", true},
		{"foundry.example.com", "rebind.attacker.example:8080", false},
		{"foundry.example.com", "foundry.example.com.attacker.example", false},
		{"foundry.example.com", "", false},
	} {
		if got := HostAllowed(c.public, c.host); got != c.want {
			t.Errorf("HostAllowed(%q, %q) = %v, want %v", c.public, c.host, got, c.want)
		}
	}
}
