package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Which of a stream copy's meta.inf and meta.sum changed, told from the
// records the store scan made (StreamCopy.MetaInf, MetaSum, MetaSumOK) and
// the meta state's stream configs: store-corrupt's judgement, no I/O.

// metaRef is a stream config to hold a meta.inf against.
type metaRef struct {
	source string
	fields map[string]json.RawMessage
}

// blameMeta tells, for a stream copy whose meta.inf and meta.sum
// disagree (c), which file changed, and rewrites c's file, offset and
// message to say so: meta.inf is held against the stream config in that
// server's meta state (snapshot and WAL) and against the other replicas'
// meta.inf whose meta.sum verifies, all as read once into the model. A
// field that differs names meta.inf (and the flipped bit when it is one);
// none differing names meta.sum. Without a config to hold it against, c is
// left as the parser said it.
func blameMeta(m *model.Model, copies map[string]*model.StreamCopy, c *model.Corruption) {
	if c.Kind != natsfmt.CorruptMetaChecksum || c.Structure != natsfmt.StructMetaSum {
		return
	}
	if strings.Contains(c.File, "/obs/") {
		// No other copy of a consumer's config to hold it against:
		// either file may be the one that changed.
		c.Message += fmt.Sprintf("; either %s or %s changed (no reference config for a consumer tells which)", path.Join(path.Dir(c.File), "meta.inf"), c.File)
		return
	}
	dir := path.Dir(c.File)
	cp := copies[dir]
	if cp == nil || cp.MetaInf == nil || cp.MetaSum == nil {
		return
	}
	var infFields map[string]json.RawMessage
	if json.Unmarshal(cp.MetaInf, &infFields) != nil {
		return
	}
	// The folder is named for the stream (meta.inf's own name may be the
	// field that changed).
	stream := path.Base(dir)
	refs := metaRefs(m, c, dir, stream)
	if len(refs) == 0 {
		return
	}
	blame(c, stream, cp.MetaInf, cp.MetaSum, infFields, refs)
}

// copiesByPath are the model's stream copies by folder.
func copiesByPath(m *model.Model) map[string]*model.StreamCopy {
	out := map[string]*model.StreamCopy{}
	for _, st := range m.Streams {
		for _, c := range st.Copies {
			out[c.Path] = c
		}
	}
	return out
}

// metaRefs gathers the configs to compare the copy in dir with.
func metaRefs(m *model.Model, c *model.Corruption, dir, stream string) []metaRef {
	var refs []metaRef
	add := func(source string, raw []byte) {
		var f map[string]json.RawMessage
		if json.Unmarshal(raw, &f) == nil && len(f) > 0 {
			refs = append(refs, metaRef{source, f})
		}
	}
	if srv := m.ServerOf(c.Server); srv != nil && srv.Meta != nil {
		if a := srv.Meta.Streams[model.AssetKey{Account: c.Account, Stream: stream}]; a != nil && len(a.Config) > 0 {
			add(fmt.Sprintf("the stream config in %s's meta state (%s)", srv.Name, srv.Meta.Source), a.Config)
		}
	}
	for _, st := range m.Streams {
		if st.Account != c.Account || st.Name != stream {
			continue
		}
		for _, cp := range st.Copies {
			if cp.Path == dir || cp.MetaInf == nil || !cp.MetaSumOK {
				continue
			}
			add(fmt.Sprintf("%s's meta.inf (%s/meta.inf, its meta.sum verifies)", m.Name(cp.Server), cp.Path), cp.MetaInf)
		}
	}
	return refs
}

// blame names the changed file in c from the comparison with refs.
func blame(c *model.Corruption, stream string, inf, sum []byte, infFields map[string]json.RawMessage, refs []metaRef) {
	if !utf8.Valid(inf) {
		// The server writes JSON text: bytes that are not UTF-8 are meta.inf's damage.
		at := 0
		for at < len(inf) {
			r, n := utf8.DecodeRune(inf[at:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		c.File, c.Offset, c.HasOffset = path.Join(path.Dir(c.File), "meta.inf"), int64(at), true
		c.Message = fmt.Sprintf("%s changed, not meta.sum: byte %d (0x%02x) is not UTF-8 text, which the server never writes, so meta.sum no longer matches", c.File, at, inf[at])
		return
	}
	differ := map[string][]string{} // field -> sources it differs from
	for _, r := range refs {
		// In key order: with two fields changed, the finding names the same
		// one on every run (map order named either).
		for _, k := range model.SortedKeys(r.fields) {
			rv := r.fields[k]
			iv, ok := infFields[k]
			if !ok {
				// A key one bit off (a flip in a field name) is meta.inf
				// changed too: the field reads as missing.
				if k2, off, bit, found := renamedKey(infFields, r.fields, k); found {
					at := bytes.Index(inf, []byte(strconv.Quote(k2)+":")) + 1 + off
					c.File, c.Offset, c.HasOffset = path.Join(path.Dir(c.File), "meta.inf"), int64(at), true
					c.Message = fmt.Sprintf("%s changed, not meta.sum: it names field %q where %s names %q; byte %d of meta.inf differs by one bit (bit %d), so meta.sum no longer matches",
						c.File, k2, r.source, k, at, bit)
					return
				}
				continue
			}
			if k == "Created" || k == "metadata" {
				continue
			}
			if !jsonEqual(iv, rv) {
				differ[k] = append(differ[k], r.source)
				if off, bit, ok := oneBit(iv, rv); ok {
					at := valueOffset(inf, k) + off
					c.File, c.Offset, c.HasOffset = path.Join(path.Dir(c.File), "meta.inf"), int64(at), true
					c.Message = fmt.Sprintf("%s changed, not meta.sum: field %q is %s where %s holds %s; byte %d of meta.inf differs by one bit (bit %d, %q for %q), so meta.sum no longer matches",
						c.File, k, iv, r.source, rv, at, bit, inf[at], rv[off])
					return
				}
			}
		}
	}
	if len(differ) > 0 {
		var parts []string
		for _, k := range model.SortedKeys(differ) {
			parts = append(parts, fmt.Sprintf("%q (against %s)", k, strings.Join(differ[k], "; ")))
		}
		c.File = path.Join(path.Dir(c.File), "meta.inf")
		c.Message = fmt.Sprintf("%s changed, not meta.sum: it differs in %s", c.File, strings.Join(parts, ", "))
		return
	}
	// meta.inf says what the config says: meta.sum is what changed.
	want := fmt.Sprintf("%x", binfmt.HH64(stream, inf))
	got := strings.TrimSpace(string(sum))
	c.Message = fmt.Sprintf("%s changed, not meta.inf: meta.inf agrees with %s, and hashes to %s where meta.sum holds %s", c.File, refs[0].source, want, got)
	if off, bit, ok := oneBit([]byte(got), []byte(want)); ok {
		c.Offset, c.HasOffset = int64(off), true
		c.Message += fmt.Sprintf(" (byte %d differs by one bit, bit %d)", off, bit)
	}
}

// renamedKey finds a key of inf, absent from ref, one bit away from ref's
// key k (absent from inf).
func renamedKey(inf, ref map[string]json.RawMessage, k string) (k2 string, off, bit int, ok bool) {
	for cand := range inf {
		if _, inRef := ref[cand]; inRef {
			continue
		}
		if off, bit, ok := oneBit([]byte(cand), []byte(k)); ok {
			return cand, off, bit, true
		}
	}
	return "", 0, 0, false
}

// jsonEqual compares two JSON values by meaning.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// oneBit reports where a and b, of equal length, differ by exactly one bit.
func oneBit(a, b []byte) (off, bit int, ok bool) {
	if len(a) != len(b) {
		return 0, 0, false
	}
	off = -1
	for i := range a {
		if d := a[i] ^ b[i]; d != 0 {
			if off >= 0 || d&(d-1) != 0 {
				return 0, 0, false
			}
			off, bit = i, bits.TrailingZeros8(d)
		}
	}
	return off, bit, off >= 0
}

// valueOffset is where the value of top-level field k starts in a JSON
// object as nats-server writes it ("k": value, no other spacing).
func valueOffset(doc []byte, k string) int {
	key := []byte(strconv.Quote(k) + ":")
	i := bytes.Index(doc, key)
	if i < 0 {
		return 0
	}
	i += len(key)
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n') {
		i++
	}
	return i
}
