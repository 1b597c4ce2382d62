package load

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/internal/storecrypt"
	"github.com/jsforensics/jsforensics/report"
)

// unseal puts the bundle's stores behind the storecrypt view until the
// returned func puts the bundle's own FS back, so that every step of the
// load reads an encrypted store as a plain one. The keys are the
// operator's (never in a note, an error or the report).
// Unseal puts b's stores behind the decrypting view of keys until restore,
// as a load with those keys does: what is read of them after the load
// (salvage) is read as the load read it.
func Unseal(b *bundle.Bundle, keys []string) (restore func()) {
	return (&loader{b: b, m: &model.Model{}}).unseal(keys)
}

func (l *loader) unseal(keys []string) (restore func()) {
	var roots []string
	for _, st := range l.b.Stores {
		roots = append(roots, st.Dir)
	}
	orig := l.b.FS
	l.crypt = storecrypt.New(orig, keys, roots...)
	l.b.FS = l.crypt
	l.m.KeysGiven = true
	return func() { l.b.FS = orig }
}

// keyNotes says, per server, what the keys opened: every key file (the
// store was read as a plain one), none (the key is not this store's: it
// stays sealed, as without a key), or some (the rest are damaged or sealed
// under another key).
func (l *loader) keyNotes(keyFiles map[string][]storecrypt.KeyFile) {
	l.markEncrypted(keyFiles)
	if keyFiles == nil {
		return
	}
	for _, st := range l.b.Stores {
		kfs := keyFiles[st.Dir]
		if len(kfs) == 0 {
			continue
		}
		name := st.Dir
		if srv := l.storeServer(st); srv != nil {
			name = srv.Name
		}
		var failed []string
		ciphers := map[string]bool{}
		prev := 0
		for _, kf := range kfs {
			switch {
			case kf.Err == nil:
				what := "streams"
				if strings.Contains(kf.Path, "/_js_/") {
					what = "raft WALs"
				}
				ciphers[fmt.Sprintf("%s %s", what, kf.Cipher)] = true
				if kf.KeyIndex > 0 {
					prev++
				}
			case errors.Is(kf.Err, storecrypt.ErrWrongKey):
				failed = append(failed, kf.Path)
			default:
				failed = append(failed, kf.Path+" ("+kf.Err.Error()+")")
			}
		}
		var cs []string
		for _, what := range []string{"streams", "raft WALs"} {
			for _, c := range []storecrypt.Cipher{storecrypt.ChaCha, storecrypt.AES} {
				if k := fmt.Sprintf("%s %s", what, c); ciphers[k] {
					cs = append(cs, k)
				}
			}
		}
		switch {
		case len(failed) == len(kfs):
			l.note("%s: the key given does not open this store's stream keys (none of its %d key files opens with it, under either cipher): it is not the key this store was sealed with, so its streams, consumers and raft WALs stay sealed and are read as without a key; nothing here says they are damaged", name, len(kfs))
		case len(failed) > 0:
			shown := report.FirstOf(failed, 5)
			l.note("%s: store encrypted at rest (%s); the key opens %d of its %d key files, not %s: these are damaged or sealed under another key (a prev_encryption_key not given?); what they seal stays unread", name, strings.Join(cs, ", "), len(kfs)-len(failed), len(kfs), strings.Join(shown, ", "))
		default:
			l.note("%s: store encrypted at rest (%s); all %d key files open with the key given, so it is read and checked as a plain store", name, strings.Join(cs, ", "), len(kfs))
		}
		if prev > 0 {
			l.note("%s: %d key files open only with a later key given (prev_encryption_key), which the server also tries", name, prev)
		}
	}
}

// markEncrypted records the servers whose store is encrypted at rest,
// opened or not: a remedy that has one of them started must say on which
// config (guardRemedies).
func (l *loader) markEncrypted(keyFiles map[string][]storecrypt.KeyFile) {
	l.m.EncryptedStores = map[model.ServerID]bool{}
	for _, c := range l.m.Corruptions {
		if c.Kind == natsfmt.CorruptEncrypted {
			l.m.EncryptedStores[c.Server] = true
		}
	}
	if keyFiles == nil {
		return
	}
	for _, st := range l.b.Stores {
		if srv := l.storeServer(st); srv != nil && len(keyFiles[st.Dir]) > 0 {
			l.m.EncryptedStores[srv.ID] = true
		}
	}
}
