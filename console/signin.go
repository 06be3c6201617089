package console

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/hookstream/hookstream/adminclient"
)

type signInView struct {
	Token string // the sign-in form's double-submit token
	Error string
}

// signInPage shows the sign-in form with a fresh double-submit token: the form has no session
// whose CSRF token it could carry, so the same random value goes in a cookie and in the form.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if ss := c.session(r); ss != nil {
		http.Redirect(w, r, c.homeOf(ss), http.StatusSeeOther)
		return
	}
	c.showSignIn(w, r, http.StatusOK, "")
}

func (c *Console) showSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if msg == "" && !secureContext(r) {
		msg = insecureOrigin
	}
	tok := randomToken()
	http.SetCookie(w, cookie(signInCookie, tok, 600))
	if err := c.render(w, r, nil, status, "signin.html", "Sign in", signInView{Token: tok, Error: msg}); err != nil {
		c.log.Error("console sign-in page failed", "err", err)
		http.Error(w, "the console failed to build this page", http.StatusInternalServerError)
	}
}

// signIn checks the credential against the API itself (GET /v1/limits names a key's partner;
// the operator token alone may list partners) and opens a session for it.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		c.showSignIn(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	ck, err := r.Cookie(signInCookie)
	if err != nil || !sameToken(r.PostForm.Get("csrf"), ck.Value) {
		c.metrics.refused.WithLabelValues("csrf").Inc()
		c.renderError(w, r, nil, &pageError{status: http.StatusForbidden,
			msg: "The sign-in form has no valid CSRF token; open the sign-in page again."})
		return
	}
	if !secureContext(r) {
		// The browser would drop the Secure session cookie and come back signed out, silently.
		c.showSignIn(w, r, http.StatusBadRequest, insecureOrigin)
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	if token == "" {
		c.showSignIn(w, r, http.StatusUnprocessableEntity, "Enter a partner API key (hsk_…) or the operator token.")
		return
	}
	probe := &session{token: token}
	api := c.api(probe)
	limits, err := api.GetLimitsWithResponse(r.Context(), nil)
	if err := check(limits, err); err != nil {
		if pe, ok := err.(*pageError); ok && pe.status == http.StatusUnauthorized {
			c.metrics.signIns.WithLabelValues("refused").Inc()
			c.showSignIn(w, r, http.StatusUnauthorized, "The admin API does not accept this token: it is not a partner API key or the operator token.")
			return
		}
		c.log.Error("console sign-in: limits", "err", err)
		c.renderError(w, r, nil, asPageError(err))
		return
	}
	var ss *session
	if pid := limits.JSON200.PartnerID; pid != nil && *pid != "" {
		ss = c.sessions.create(token, false, *pid)
		c.metrics.signIns.WithLabelValues("partner").Inc()
	} else {
		one := 1
		res, err := api.ListPartnersWithResponse(r.Context(), &adminclient.ListPartnersParams{Limit: &one})
		if err := check(res, err); err != nil {
			c.renderError(w, r, nil, asPageError(err))
			return
		}
		ss = c.sessions.create(token, true, "")
		c.metrics.signIns.WithLabelValues("operator").Inc()
	}
	http.SetCookie(w, cookie(signInCookie, "", -1))
	http.SetCookie(w, cookie(sessionCookie, ss.id, int(c.cfg.SessionTTL.Seconds())))
	http.Redirect(w, r, c.homeOf(ss), http.StatusSeeOther)
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, ss *session) error {
	c.sessions.delete(ss.id)
	http.SetCookie(w, cookie(sessionCookie, "", -1))
	http.Redirect(w, r, "/console/sign-in", http.StatusSeeOther)
	return nil
}

func (c *Console) home(w http.ResponseWriter, r *http.Request, ss *session) error {
	http.Redirect(w, r, c.homeOf(ss), http.StatusSeeOther)
	return nil
}

func (c *Console) homeOf(ss *session) string {
	if ss.operator {
		return "/console/operator/partners"
	}
	return pathOf("partners", ss.partnerID, "endpoints")
}

const insecureOrigin = "The console needs HTTPS (or http://localhost / 127.0.0.1): its session cookie is Secure, " +
	"so a browser keeps it only there. Serve the admin address behind TLS (a proxy that sets X-Forwarded-Proto: https), " +
	"or reach it through localhost, e.g. ssh -L 8080:127.0.0.1:8080."

// secureContext reports whether the browser will keep a Secure cookie from this request: over
// TLS, behind a TLS proxy that says so, or on a loopback host, which browsers treat as secure.
func secureContext(r *http.Request) bool {
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// asPageError keeps a *pageError and turns anything else into the 502 of an API that could not
// be asked.
func asPageError(err error) *pageError {
	if pe, ok := err.(*pageError); ok {
		return pe
	}
	return &pageError{status: http.StatusBadGateway, msg: "The admin API could not be asked; try again."}
}
