package sender

import (
	"regexp"
	"strings"

	"github.com/hookstream/hookstream/internal/clip"
)

// MaxExcerptBytes bounds the response excerpt kept as evidence (design.md section 7, R18).
const MaxExcerptBytes = 1024

// redactWindow is how much of a body is redacted before the excerpt is cut: enough that a
// secret running past the cut is still recognised by its start.
const redactWindow = 4 * MaxExcerptBytes

const redacted = "[REDACTED]"

// redactions strip anything in a receiver's answer that looks like a credential, so the
// history shown to partners and operators cannot leak one: hookstream's own secrets and
// signatures (a receiver may echo our request), PEM private keys, passwords in URLs,
// authorization headers and bearer tokens, key=value or "key": "value" pairs whose key names a
// secret (AWS's aws_secret_access_key among them), JWTs, and keys and tokens known by their
// prefix: Stripe, OpenAI and Anthropic style sk-/pk-/rk-, AWS access key ids (AKIA, ASIA),
// GitHub (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_), Slack (xoxb-, xoxp-, …), GitLab (glpat-)
// and Google API keys (AIza). Order matters: a PEM block goes first, whole, before the rules
// that would cut it into pieces.
var redactions = []struct {
	re   *regexp.Regexp
	repl string
}{
	// A private key cut off by the excerpt's window has no END line: redact to the end.
	{regexp.MustCompile(`(-----BEGIN[A-Z0-9 ]* PRIVATE KEY-----)[\s\S]*?(?:-----END[A-Z0-9 ]* PRIVATE KEY-----|$)`), "${1}" + redacted},
	{regexp.MustCompile(`whsec_[A-Za-z0-9+/=_-]*`), "whsec_" + redacted},
	{regexp.MustCompile(`\bv1,[A-Za-z0-9+/]{20,}={0,2}`), "v1," + redacted},
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s/?#@:"'<>]*:)[^\s/?#@"'<>]+@`), "${1}" + redacted + "@"},
	{regexp.MustCompile(`(?i)((?:proxy-)?authorization|x-api-key|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|client[_-]?secret|(?:aws[_-]?)?secret[_-]?access[_-]?key|secret|password|passwd|token|cookie|set-cookie|webhook-signature|signature)("?'?\s*[:=]\s*"?'?)(?:(?:bearer|basic|token)\s+)?[^"'\s,;&}<]+`), "${1}${2}" + redacted},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9\-._~+/]+=*`), "${1} " + redacted},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), redacted},
	{regexp.MustCompile(`\b(?:sk|pk|rk)[-_](?:live_|test_|proj-|ant-)?[A-Za-z0-9_-]{16,}`), redacted},
	{regexp.MustCompile(`\b(?:(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AIza[A-Za-z0-9_-]{35})`), redacted},
}

// Redact removes credentials from s (see redactions).
func Redact(s string) string {
	for _, r := range redactions {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// excerpt turns raw response bytes into evidence: valid UTF-8 without NUL bytes (PostgreSQL
// text holds neither), redacted, and at most MaxExcerptBytes long. Each invalid UTF-8 sequence
// and each NUL byte becomes U+FFFD, so the excerpt still shows that something was there and
// where.
func excerpt(b []byte) string {
	if len(b) == 0 {
		return "" // the usual 2xx answer: nothing to redact
	}
	if len(b) > redactWindow {
		b = b[:redactWindow]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	s = Redact(s)
	return clip.Marked(s, MaxExcerptBytes)
}
