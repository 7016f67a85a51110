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
