package model

import (
	"strings"
	"time"
)

// Account is an account the servers name by its public key (operator
// mode), as the bundle tells it: the JWTs of it the bundle holds (a full or
// cache resolver's folder, an nsc store) and the name its JWT gives it.
type Account struct {
	// Key is the account's public key: how the servers name it (store
	// folders, raft group accounts, /jsz account_details id, logs).
	Key string
	// Name is the JWT's name claim ("" when no JWT or capture gives it).
	Name string
	// NameSource says where Name was read: "JWT <path>" or "/jsz <path>".
	NameSource string
	// JWTs are the account's JWTs in the bundle, by path.
	JWTs []AccountJWT
}

// AccountJWT is one account JWT file of the bundle, its payload decoded
// (the signature is not verified).
type AccountJWT struct {
	Path string
	// Server is the server whose folder holds the file ("" when no server
	// name is a folder of its path).
	Server ServerID
	// Dir is the folder holding the file (a resolver's folder).
	Dir      string
	Name     string
	Issuer   string
	IssuedAt time.Time
	// Expires is the exp claim; zero when the JWT does not expire.
	Expires time.Time
	// JetStream: the JWT's limits give the account JetStream.
	JetStream bool
}

// IsAccountKey says whether s has the form of an account public key (56
// characters of base32 starting with 'A'), as the servers name accounts in
// operator mode.
func IsAccountKey(s string) bool {
	if len(s) != 56 || s[0] != 'A' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// AccountName is the name the bundle gives the account named acc ("" when
// none does, or acc is no account key).
func (m *Model) AccountName(acc string) string {
	if m == nil || m.Accounts == nil {
		return ""
	}
	if a := m.Accounts[acc]; a != nil {
		return a.Name
	}
	return ""
}

// AccountLabel is acc as a reader wants it: "SHOP (ACXYZ…)" when the bundle
// gives the account's name, else acc.
func (m *Model) AccountLabel(acc string) string {
	return AccountLabel(acc, m.AccountName(acc))
}

// AccountLabel is "name (key)", or key when name is empty or the key itself.
func AccountLabel(key, name string) string {
	if name == "" || name == key || strings.Contains(key, "(") {
		return key
	}
	return name + " (" + key + ")"
}

// HealthzAnswer is one captured /healthz answer of a server: its status
// and error texts ("healthz: unavailable: JetStream can not lookup account
// …"); Time is zero when the capture carries no date.
type HealthzAnswer struct {
	Server ServerID
	Time   time.Time
	Status string
	Text   string
	File   string
}
