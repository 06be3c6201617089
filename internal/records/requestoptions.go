package records

import "github.com/hookstream/hookstream/internal/secretbox"

// RequestOptions are how the sender's requests to one endpoint look and travel beyond the
// signed body (design.md section 7): extra headers, authentication to the receiver, a client certificate
// and the egress proxy. The zero value is none of them. The admin API stores it, in this JSON
// form, in endpoint.request_options; cdc carries it as it is. Secrets in it are sealed (see
// AuthAAD and ClientKeyAAD) and opened only by the sender.
type RequestOptions struct {
	// Headers are sent with every request, after the reserved ones are refused at
	// registration (the signature headers, Content-Type, hop-by-hop headers).
	Headers map[string]string `json:"headers,omitempty"`
	// Auth authenticates the request to the receiver; nil sends none.
	Auth *Auth `json:"auth,omitempty"`
	// ClientCertificate is offered when the receiver asks for one (mTLS); nil offers none.
	ClientCertificate *ClientCertificate `json:"client_certificate,omitempty"`
	// EgressProxy names one of the deployment's forward proxies; empty means the deployment's
	// default route (its default proxy or none).
	EgressProxy string `json:"egress_proxy,omitempty"`
}

// Authentication kinds of Auth.Type.
const (
	AuthHeader = "header" // a static secret in a header of the partner's choosing
	AuthBasic  = "basic"  // HTTP basic (RFC 7617)
	AuthOAuth2 = "oauth2" // OAuth 2.0 client credentials (RFC 6749 section 4.4), a bearer token
)

// OAuth 2.0 client authentication methods (RFC 6749 section 2.3.1).
const (
	ClientSecretBasic = "client_secret_basic" // the client id and secret as HTTP basic (the default)
	ClientSecretPost  = "client_secret_post"  // the client id and secret in the form body
)

// Auth is one endpoint's authentication to its receiver. SecretCiphertext seals the one secret
// of the kind: the header value, the basic password, or the OAuth client secret.
type Auth struct {
	Type string `json:"type"`
	// HeaderName is the header carrying the secret (AuthHeader).
	HeaderName string `json:"header_name,omitempty"`
	// Username is the basic user name (AuthBasic).
	Username string `json:"username,omitempty"`
	// TokenURL, ClientID, Scopes, Audience and ClientAuthMethod describe the token request
	// (AuthOAuth2).
	TokenURL         string   `json:"token_url,omitempty"`
	ClientID         string   `json:"client_id,omitempty"`
	Scopes           []string `json:"scopes,omitempty"`
	Audience         string   `json:"audience,omitempty"`
	ClientAuthMethod string   `json:"client_auth_method,omitempty"`
	// SecretCiphertext is the sealed secret (secretbox, AAD AuthAAD(endpoint id)).
	SecretCiphertext []byte `json:"secret_ciphertext"`
}

// ClientCertificate is a client certificate for mTLS: the PEM chain, leaf first, as given at
// registration, and its private key sealed (secretbox, AAD ClientKeyAAD(endpoint id)).
type ClientCertificate struct {
	CertificatePEM string `json:"certificate_pem"`
	KeyCiphertext  []byte `json:"key_ciphertext"`
}

// AuthAAD binds a sealed Auth secret to its endpoint. Secret ids start with "whsk_", so no
// signing secret's AAD (secretbox.AAD(endpoint, secret id)) can equal it.
func AuthAAD(endpointID string) []byte { return secretbox.AAD(endpointID, "auth") }

// ClientKeyAAD binds a sealed client-certificate key to its endpoint.
func ClientKeyAAD(endpointID string) []byte { return secretbox.AAD(endpointID, "client_key") }
