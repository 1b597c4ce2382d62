package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// encryptedKey is the key of a committed encrypted bundle (want.json expect.key).
func encryptedKey(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundles, name, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Expect struct {
			Key string `json:"key"`
		} `json:"expect"`
	}
	if err := json.Unmarshal(b, &w); err != nil || w.Expect.Key == "" {
		t.Fatalf("%s: no expect.key: %v", name, err)
	}
	return w.Expect.Key
}

// TestAnalyzeKey: --key, --key-file and JSF_KEY open the encrypted bundles (their
// stream figures are read: no copy is "sealed"); the key is nowhere in
// the output nor in stderr; the bundle is left byte-identical.
func TestAnalyzeKey(t *testing.T) {
	for _, name := range []string{"encrypted-v2.15.2", "encrypted-aes-v2.12.1"} {
		key := encryptedKey(t, name)
		b := filepath.Join(bundles, name, "bundle")
		for _, how := range []string{"flag", "env", "file"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				before := treeDigest(t, b)
				args := []string{"analyze", b, "--format", "json"}
				switch how {
				case "flag":
					args = append(args, "--key", key)
				case "file":
					kf := filepath.Join(t.TempDir(), "key")
					if err := os.WriteFile(kf, []byte(key+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
					args = append(args, "--key-file", kf)
				default:
					t.Setenv(keyEnv, key)
				}
				var out, errb bytes.Buffer
				if code := run(args, &out, &errb); code != exitOK {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				if strings.Contains(out.String()+errb.String(), key) {
					t.Fatal("the key is in the output")
				}
				if strings.Contains(out.String(), `"sealed"`) || !strings.Contains(out.String(), "key files open with the key given") {
					t.Error("the stores were not opened")
				}
				if treeDigest(t, b) != before {
					t.Fatal("analyze changed the bundle")
				}
			})
		}
	}
}

// TestDumpBlockKey: dump blk and dump wal of encrypted blocks print their
// records with --jetstream-key (or JSF_KEY), refuse a wrong key with an
// error naming the key file (not the key), and print raw garbage never.
func TestDumpBlockKey(t *testing.T) {
	key := encryptedKey(t, "encrypted-aes-v2.12.1")
	store := filepath.Join(bundles, "encrypted-aes-v2.12.1/bundle/aes-0/data/jetstream")
	for _, tc := range []struct{ sub, file, want string }{
		{"blk", filepath.Join(store, "$G/streams/ORDERS/msgs/1.blk"), "orders."},
		{"wal", filepath.Join(store, "$SYS/_js_/C-R3F-1fzQ4xfl/msgs/1.blk"), "term"},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"dump", tc.sub, tc.file, "--key", key}, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), "error") || strings.Contains(out.String(), key) {
				t.Errorf("output:\n%s", out.String())
			}
			t.Setenv(keyEnv, key)
			out.Reset()
			if code := run([]string{"dump", tc.sub, tc.file}, &out, &errb); code != exitOK || !strings.Contains(out.String(), tc.want) {
				t.Errorf("JSF_KEY: exit %d:\n%s", code, out.String())
			}
			out.Reset()
			errb.Reset()
			const wrong = "jsf-test-wrong-key"
			if code := run([]string{"dump", tc.sub, tc.file, "--key", wrong}, &out, &errb); code != exitUnknown ||
				!strings.Contains(errb.String(), "does not open") || strings.Contains(errb.String(), wrong) {
				t.Errorf("wrong key: exit %d, stderr %q", code, errb.String())
			}
		})
	}
}
