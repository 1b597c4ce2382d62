package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJWTsFoundByContent: the account JWTs a full resolver of real servers
// wrote (operator-unresolved-v2.12.15: op-N/jwt/<key>.jwt) and the JWTs as
// issued beside them are found, each once, with no problem; nothing in the
// bundle named like a JWT is left unread.
func TestJWTsFoundByContent(t *testing.T) {
	b, err := Open(filepath.Join("..", "..", "testdata", "bundles", "operator-unresolved-v2.12.15", "bundle"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	resolver, issued := 0, 0
	for _, j := range b.JWTs {
		switch {
		case strings.Contains(j.Path, "/jwt/") && strings.HasSuffix(j.Path, ".jwt"):
			resolver++
		case strings.HasPrefix(j.Path, "issued-jwts/"):
			issued++
		default:
			t.Errorf("JWT at %s", j.Path)
		}
		if !sniffJWT(j.Data) {
			t.Errorf("%s: held bytes are no JWT", j.Path)
		}
	}
	// Three servers' resolver folders, each with the system account's and
	// SHOP's JWT (BILLING's was removed), and the two accounts as issued.
	if resolver != 6 || issued != 2 {
		t.Errorf("%d resolver JWTs, %d issued, want 6 and 2", resolver, issued)
	}
	for _, p := range b.Problems {
		t.Errorf("problem: %s", p)
	}
}

// TestJWTNamedButNone: a file named *.jwt that holds no JWT is a problem,
// said, never dropped; a JWT under another name is found by its content.
func TestJWTNamedButNone(t *testing.T) {
	real, err := os.ReadFile(filepath.Join("..", "..", "testdata", "bundles", "operator-unresolved-v2.12.15", "bundle", "issued-jwts", "SHOP.jwt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "jwt"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "jwt", "ABROKEN.jwt"), []byte("not a token at all\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "jwt", "shop.txt"), append([]byte("-----BEGIN NATS ACCOUNT JWT-----\n"), append(real, "\n------END NATS ACCOUNT JWT------\n"...)...), 0o644))
	b, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.JWTs) != 1 || b.JWTs[0].Path != "jwt/shop.txt" {
		t.Errorf("JWTs %+v, want the decorated one", b.JWTs)
	}
	if len(b.Problems) != 1 || b.Problems[0].Path != "jwt/ABROKEN.jwt" || !strings.Contains(b.Problems[0].Reason, "named like a JWT but holds none") {
		t.Errorf("problems %v", b.Problems)
	}
}
