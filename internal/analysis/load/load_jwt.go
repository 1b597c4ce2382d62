package load

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// NATS JWTs (nats-io/jwt v2): header.payload.signature, each base64url;
// the payload is JSON with the standard claims (jti, iat, iss, sub, name,
// exp) and a "nats" object whose "type" says what it is ("operator",
// "account", "user", …); an account's JetStream limits are
// nats.limits.{mem_storage, disk_storage} (-1 unlimited, 0 disabled) or,
// tiered, nats.limits.tiered_limits. A full resolver keeps one file per
// account, <public key>.jwt, holding the token (dirstore.go). The
// signature is not verified: the analyzer reads what the servers read.

// jwtRead is one JWT file as decoded.
type jwtRead struct {
	path   string
	claims *jwtClaims
	err    error
}

type jwtClaims struct {
	ID       string `json:"jti"`
	IssuedAt int64  `json:"iat"`
	Issuer   string `json:"iss"`
	Name     string `json:"name"`
	Subject  string `json:"sub"`
	Expires  int64  `json:"exp"`
	Nats     struct {
		Type   string `json:"type"`
		Limits struct {
			MemStorage   *int64                     `json:"mem_storage"`
			DiskStorage  *int64                     `json:"disk_storage"`
			TieredLimits map[string]json.RawMessage `json:"tiered_limits"`
		} `json:"limits"`
	} `json:"nats"`
}

// readJWTs decodes every JWT file the bundle reader found (held as read).
func readJWTs(files []bundle.JWT) []jwtRead {
	out := make([]jwtRead, 0, len(files))
	for _, f := range files {
		c, err := decodeJWT(f.Data)
		out = append(out, jwtRead{path: f.Path, claims: c, err: err})
	}
	return out
}

// decodeJWT decodes the payload of the JWT data holds (the token, or the
// token decorated as nsc writes it).
func decodeJWT(data []byte) (*jwtClaims, error) {
	t := bytes.TrimSpace(data)
	if bytes.HasPrefix(t, []byte("-----BEGIN NATS ")) {
		_, rest, _ := bytes.Cut(t, []byte("\n"))
		t = bytes.TrimSpace(rest)
	}
	if i := bytes.IndexAny(t, " \t\r\n"); i >= 0 {
		t = t[:i]
	}
	parts := bytes.Split(t, []byte("."))
	if len(parts) != 3 {
		return nil, fmt.Errorf("not three dot-separated parts")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(string(parts[1]), "="))
	if err != nil {
		return nil, fmt.Errorf("payload is not base64url: %v", err)
	}
	var c jwtClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("payload is not the JSON of claims: %v", err)
	}
	if c.Subject == "" || c.Nats.Type == "" {
		return nil, fmt.Errorf("payload has no sub or nats.type claim: no NATS JWT")
	}
	return &c, nil
}

// jetStream says whether an account's limits give it JetStream.
func (c *jwtClaims) jetStream() bool {
	l := c.Nats.Limits
	return l.MemStorage != nil && *l.MemStorage != 0 || l.DiskStorage != nil && *l.DiskStorage != 0 || len(l.TieredLimits) > 0
}

func unixTime(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// accounts takes the decoded JWTs into the model: an account JWT is kept
// under its account (named by the JWT where no capture named it yet), by
// the server whose folder holds it; other JWTs are counted in a note; a
// file that does not decode is unread (jwtUnread).
func (l *loader) accounts(reads []jwtRead) {
	if len(reads) == 0 {
		return
	}
	if l.m.Accounts == nil {
		l.m.Accounts = map[string]*model.Account{}
	}
	kinds := map[string]int{}
	folders := map[string]bool{}
	newest := map[string]int64{} // account -> iat of the JWT its name was taken from
	for _, r := range reads {
		if r.err != nil {
			l.jwtUnread = append(l.jwtUnread, report.UnreadFile{Path: r.path, Reason: "looks like a NATS JWT but does not decode: " + r.err.Error()})
			continue
		}
		c := r.claims
		kinds[c.Nats.Type]++
		if c.Nats.Type != "account" {
			continue
		}
		dir := parentDir(r.path)
		folders[dir] = true
		var srv model.ServerID
		if n := l.folderServer(r.path); n != "" {
			if s := l.m.Server(n); s != nil {
				srv = s.ID
			}
		}
		a := l.account(c.Subject)
		a.JWTs = append(a.JWTs, model.AccountJWT{Path: r.path, Server: srv, Dir: dir, Name: c.Name, Issuer: c.Issuer,
			IssuedAt: unixTime(c.IssuedAt), Expires: unixTime(c.Expires), JetStream: c.jetStream()})
		if c.Name != "" && (!strings.HasPrefix(a.NameSource, "JWT ") || c.IssuedAt > newest[c.Subject]) {
			a.Name, a.NameSource = c.Name, "JWT "+r.path
			newest[c.Subject] = c.IssuedAt
		}
	}
	var parts []string
	for _, k := range sortedKeys(kinds) {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	if len(parts) > 0 {
		l.note("JWTs: %s, read from %d file(s) (signatures not verified); account JWTs in %d folder(s)", strings.Join(parts, ", "),
			len(reads)-len(l.jwtUnread), len(folders))
	}
}

// account is the model's account named key, made when new.
func (l *loader) account(key string) *model.Account {
	if l.m.Accounts == nil {
		l.m.Accounts = map[string]*model.Account{}
	}
	a := l.m.Accounts[key]
	if a == nil {
		a = &model.Account{Key: key}
		l.m.Accounts[key] = a
	}
	return a
}

// accountName takes the name a capture gives an account named by key
// (/jsz account_details: id is the key, name the JWT's name); a JWT's
// name read later takes precedence.
func (l *loader) accountName(key, name, source string) {
	if name == "" || name == key || !model.IsAccountKey(key) {
		return
	}
	a := l.account(key)
	if a.Name == "" {
		a.Name, a.NameSource = name, source
	}
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
