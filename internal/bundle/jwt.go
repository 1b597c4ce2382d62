package bundle

import (
	"bytes"
	"path"
	"strings"
)

// JWT is a file of the bundle holding a NATS JWT (an account's in a
// resolver's folder, an operator's, a user's credentials), found by
// content: the token, or the token decorated as nsc writes it
// ("-----BEGIN NATS ACCOUNT JWT-----"). Data is the file's bytes; load
// decodes them (and says what does not decode).
type JWT struct {
	Path string `json:"path"`
	Data []byte `json:"-"`
}

// maxJWTBytes bounds a JWT file: an account JWT with many imports and
// exports is tens of KB; the resolver refuses more than 1 MB (the server's
// max payload).
const maxJWTBytes = 1 << 20

// sniffJWT says whether head, a whole file, holds a JWT: text whose first
// token (or the line after a "-----BEGIN NATS … JWT-----" decoration) is
// three base64url parts joined by dots, the first a JSON header ("eyJ").
func sniffJWT(head []byte) bool {
	t := bytes.TrimSpace(head)
	if bytes.HasPrefix(t, []byte("-----BEGIN NATS ")) {
		_, rest, ok := bytes.Cut(t, []byte("\n"))
		if !ok {
			return false
		}
		t = bytes.TrimSpace(rest)
	}
	if i := bytes.IndexAny(t, " \t\r\n"); i >= 0 {
		t = t[:i]
	}
	return jwtToken(t)
}

// jwtToken says whether t is header.payload.signature of base64url text,
// the header starting "eyJ" (`{"` encoded).
func jwtToken(t []byte) bool {
	if !bytes.HasPrefix(t, []byte("eyJ")) || bytes.Count(t, []byte(".")) != 2 {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '=') {
			return false
		}
	}
	return true
}

// namedLikeJWT says whether p is named as a JWT file (a resolver writes
// <public key>.jwt; nsc and users write *.jwt and *.creds).
func namedLikeJWT(p string) bool {
	base := strings.ToLower(path.Base(p))
	return strings.HasSuffix(base, ".jwt")
}
