package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

const (
	// sessionCookie holds the session id; signInCookie the double-submit token of the sign-in
	// form, which has no session yet.
	sessionCookie = "hookstream_console"
	signInCookie  = "hookstream_console_signin"
	cookiePath    = "/console"
)

// session is one signed-in browser. token is the credential the console calls the API with; it
// stays in this process's memory and is never written to a page, a cookie or a log.
type session struct {
	id        string
	csrf      string
	token     string
	operator  bool
	partnerID string // the key's partner; empty for the operator
	expires   time.Time
	flash     *flash // shown once by the next page, then dropped
}

// flash is a one-time notice carried across a redirect: an outcome, an error, or a secret the
// API showed once.
type flash struct {
	Message  string
	Error    bool
	Secret   string // shown once, with Message
	Link     string // optional: where the outcome can be followed
	LinkText string
}

// sessions is the in-memory session store: at most max sessions, at most perCredential of them
// for one credential, each living ttl from sign-in.
type sessions struct {
	mu            sync.Mutex
	m             map[string]*session
	max           int
	perCredential int
	ttl           time.Duration
	now           func() time.Time
}

func newSessions(max, perCredential int, ttl time.Duration) *sessions {
	return &sessions{m: make(map[string]*session), max: max, perCredential: perCredential, ttl: ttl, now: time.Now}
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("console: crypto/rand failed: " + err.Error()) // crypto/rand never fails on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// create stores a new session for a verified credential. A credential at its cap of sessions
// makes room by ending its own oldest one, so signing in again and again with one key never signs
// anyone else out. When the whole store is full, the credential holding the most sessions gives up
// its oldest: memory stays bounded whatever signs in, and the cost falls on the busiest credential.
func (s *sessions) create(token string, operator bool, partnerID string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweepLocked(now)
	held := make(map[string]int)
	oldest := make(map[string]*session) // per credential
	for _, v := range s.m {
		held[v.token]++
		if o := oldest[v.token]; o == nil || v.expires.Before(o.expires) {
			oldest[v.token] = v
		}
	}
	if held[token] >= s.perCredential {
		delete(s.m, oldest[token].id)
	} else if len(s.m) >= s.max {
		var busiest string
		for cred, n := range held {
			if n > held[busiest] || (n == held[busiest] && oldest[cred].expires.Before(oldest[busiest].expires)) {
				busiest = cred
			}
		}
		delete(s.m, oldest[busiest].id)
	}
	ss := &session{id: randomToken(), csrf: randomToken(), token: token, operator: operator,
		partnerID: partnerID, expires: now.Add(s.ttl)}
	s.m[ss.id] = ss
	return ss
}

// get returns the live session of id, or nil.
func (s *sessions) get(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.m[id]
	if !ok {
		return nil
	}
	if !s.now().Before(ss.expires) {
		delete(s.m, id)
		return nil
	}
	return ss
}

func (s *sessions) delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func (s *sessions) sweepLocked(now time.Time) {
	for id, v := range s.m {
		if !now.Before(v.expires) {
			delete(s.m, id)
		}
	}
}

func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// setFlash and takeFlash pass a notice to the next page of the session.
func (s *sessions) setFlash(ss *session, f flash) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.flash = &f
}

func (s *sessions) takeFlash(ss *session) *flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := ss.flash
	ss.flash = nil
	return f
}

// cookie is the one shape of every console cookie: HttpOnly (no script reads it), Secure (sent
// over HTTPS only; browsers treat http://127.0.0.1 and localhost as secure, so dev works),
// SameSite=Strict (never sent with a request another site starts), scoped to /console.
func cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode}
}

func sameToken(a, b string) bool {
	return a != "" && len(a) == len(b) && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
