package console

import (
	"testing"
	"time"
)

func TestSessionsExpireAndStayBounded(t *testing.T) {
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(2, time.Hour)
	s.now = func() time.Time { return clock }

	a := s.create("hsk_a", false, "acme")
	clock = clock.Add(time.Minute)
	b := s.create("hsk_b", false, "globex")
	if s.get(a.id) != a || s.get(b.id) != b || a.id == b.id || a.csrf == b.csrf {
		t.Fatal("two live sessions are not both found, each with its own id and CSRF token")
	}
	// A third makes room by ending the one closest to its end.
	clock = clock.Add(time.Minute)
	c := s.create("op", true, "")
	if s.get(a.id) != nil || s.get(b.id) != b || s.get(c.id) != c || s.len() != 2 {
		t.Fatalf("after a third sign-in: %d sessions", s.len())
	}
	clock = clock.Add(59 * time.Minute) // b's hour is over, c's is not
	if s.get(b.id) != nil || s.get(c.id) != c {
		t.Fatal("a session outlived its hour, or one ended early")
	}
	s.delete(c.id)
	if s.get(c.id) != nil {
		t.Fatal("a signed-out session is still found")
	}
	if s.get("") != nil || s.get("forged") != nil {
		t.Fatal("an unknown id found a session")
	}
}
