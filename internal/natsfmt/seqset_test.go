package natsfmt

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// realSeqSets returns the seqsets real servers wrote: the delete maps of the
// committed index.db files (found where a 0x16 0x02 header decodes whole,
// with its size matching its nodes), keyed by file and offset.
func realSeqSets(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	files := bundleFiles(t, func(p string) bool { return path.Base(p) == "index.db" })
	for _, k := range sortedKeys(files) {
		b := files[k]
		for i := 0; i+seqSetHdr < len(b); i++ {
			if b[i] != SeqSetMagic || b[i+1] != 2 {
				continue
			}
			if s, n, err := DecodeSeqSet(k, int64(i), b[i:]); err == nil && s.Len() > 0 {
				out[k+"@"+itoa(i)] = b[i : i+n]
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no seqset in the bundles' index.db files")
	}
	return out
}

func itoa(i int) string { return SeqRange{First: uint64(i), Last: uint64(i)}.String() }

func TestSeqSetRealIndexDB(t *testing.T) {
	sets := realSeqSets(t)
	for _, k := range sortedKeys(sets) {
		b := sets[k]
		s, n, err := DecodeSeqSet(k, 0, b)
		if err != nil || n != len(b) {
			t.Fatalf("%s: %v, used %d of %d", k, err, n, len(b))
		}
		seqs := s.Seqs(0)
		if len(seqs) != s.Size() || !slices.IsSorted(seqs) {
			t.Errorf("%s: %d sequences (sorted %v), size %d", k, len(seqs), slices.IsSorted(seqs), s.Size())
		}
		// Ranges cover exactly the sequences, and Contains agrees.
		var fromRanges []uint64
		for _, r := range s.Ranges() {
			for q := r.First; q <= r.Last; q++ {
				fromRanges = append(fromRanges, q)
			}
		}
		if !slices.Equal(fromRanges, seqs) {
			t.Errorf("%s: ranges %v hold other sequences than %v", k, s.Ranges(), seqs)
		}
		for _, q := range seqs {
			if !s.Contains(q) || s.Contains(q+1) && !slices.Contains(seqs, q+1) {
				t.Fatalf("%s: Contains wrong around %d", k, q)
			}
		}
		// Broken copies: every cut fails, a size that disagrees with the
		// nodes fails (with the set), a node count the bytes cannot hold
		// fails before anything is allocated.
		for _, cut := range []int{1, 2, 9, len(b) / 2, len(b) - 1} {
			if _, _, err := DecodeSeqSet(k, 0, b[:cut]); err == nil {
				t.Errorf("%s cut to %d bytes decoded", k, cut)
			}
		}
		bad := bytes.Clone(b)
		bad[6]++
		if s, _, err := DecodeSeqSet(k, 0, bad); !errors.Is(err, binfmt.ErrFormat) || s == nil {
			t.Errorf("%s size+1: %v", k, err)
		}
		bad = bytes.Clone(b)
		bad[5] = 0x7f
		var ce *binfmt.CorruptError
		if _, _, err := DecodeSeqSet(k, 100, bad); !errors.As(err, &ce) || ce.Offset != 102 || !errors.Is(err, binfmt.ErrFormat) {
			t.Errorf("%s huge node count: %v, want ErrFormat at 102", k, err)
		}
	}
	t.Logf("%d real seqsets", len(sets))
}

func FuzzSeqSet(f *testing.F) {
	sets := realSeqSets(f)
	for _, k := range sortedKeys(sets) {
		f.Add(sets[k])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, n, err := DecodeSeqSet("seqset", 0, b)
		checkErr(t, err)
		if err == nil {
			if n > len(b) || s.Len() != s.Size() {
				t.Fatalf("used %d of %d, len %d size %d", n, len(b), s.Len(), s.Size())
			}
			for _, q := range s.Seqs(100) {
				if !s.Contains(q) {
					t.Fatalf("Each yields %d but Contains says no", q)
				}
			}
			_ = s.Ranges()
		}
	})
}
