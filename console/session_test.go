package console

import (
	"testing"
	"time"
)

func TestSessionsExpireAndStayBounded(t *testing.T) {
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(2, 2, time.Hour)
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

func TestOneCredentialSigningInAgainNeverEndsAnotherCredentialsSession(t *testing.T) {
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(10, 3, time.Hour)
	s.now = func() time.Time { return clock }

	op := s.create("operator-token", true, "")
	globex := s.create("hsk_globex", false, "globex")
	var acme []*session
	for i := 0; i < 1000; i++ {
		clock = clock.Add(time.Millisecond)
		acme = append(acme, s.create("hsk_acme", false, "acme"))
	}
	if s.get(op.id) != op || s.get(globex.id) != globex {
		t.Fatal("a partner signing in 1,000 times ended the operator's or another partner's session")
	}
	for i, a := range acme {
		if live := s.get(a.id) == a; live != (i >= len(acme)-3) {
			t.Fatalf("acme's session %d of %d live=%v: a credential keeps exactly its 3 newest", i, len(acme), live)
		}
	}

	// A full store: the credential holding the most sessions makes room, not the oldest session.
	full := newSessions(4, 3, time.Hour)
	full.now = func() time.Time { return clock }
	op = full.create("operator-token", true, "")
	for i := 0; i < 3; i++ {
		clock = clock.Add(time.Millisecond)
		full.create("hsk_acme", false, "acme")
	}
	clock = clock.Add(time.Millisecond)
	globex = full.create("hsk_globex", false, "globex")
	if full.get(op.id) != op || full.get(globex.id) != globex || full.len() != 4 {
		t.Fatalf("a full store ended the operator's session or refused globex (%d sessions)", full.len())
	}
}
