package natsfmt

import (
	"math/bits"
	"sort"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/seqset"
)

// AVL seqset encoding (avl/seqset.go Encode/Decode, identical in v2.10.22,
// v2.12.1 and v2.15.2): the delete map of index.db and the delete blocks of
// stream snapshots.
//
//	+------+-----+--------------+----------+------------------------------+
//	| 0x16 | ver | numNodes u32 | size u32 | numNodes × node              |
//	+------+-----+--------------+----------+------------------------------+
//	0      1     2              6          10
//	node v2: base u64 | 32 × bucket u64 | height u16   (266 bytes)
//	node v1: base u64 | 64 × bucket u64 | height u16   (522 bytes)
//
// sequence = base + bucket*64 + bit. Nodes come in tree pre-order.
const (
	SeqSetMagic   = 0x16
	seqSetHdr     = 10
	seqSetNodeV2  = 8 + 32*8 + 2
	seqSetNodeV1  = 8 + 64*8 + 2
	bitsPerBucket = 64
)

// SeqSet is a decoded seqset: a set of sequences kept as the bitmap nodes it
// was encoded with (never expanded, so memory stays proportional to the bytes
// read), sorted by base.
type SeqSet struct {
	nodes []seqNode
	size  int // the number of sequences the encoding claims
}

type seqNode struct {
	base uint64
	bits []uint64 // 32 (v2) or 64 (v1) buckets
}

// DecodeSeqSet decodes a seqset at the start of b and returns it with the
// number of bytes it used; base is b[0]'s offset in file (for errors). A set
// whose stored size differs from the sequences its nodes hold comes back
// with an ErrFormat error and the byte count, so a caller may read on.
func DecodeSeqSet(file string, base int64, b []byte) (*SeqSet, int, error) {
	d := binfmt.NewDecbuf(file, base, b)
	if m := d.Byte(); d.Err() == nil && m != SeqSetMagic {
		d.Fail(binfmt.ErrFormat, "seqset magic 0x%02x, want 0x16", m)
	}
	ver := d.Byte()
	var nodeLen, buckets int
	switch ver {
	case 1:
		nodeLen, buckets = seqSetNodeV1, 64
	case 2:
		nodeLen, buckets = seqSetNodeV2, 32
	default:
		d.Fail(binfmt.ErrFormat, "seqset version %d unknown", ver)
	}
	nn := d.U32()
	size := d.U32()
	if err := d.Err(); err != nil {
		return nil, 0, err
	}
	// The node count is bounded by the bytes that could hold the nodes
	// (avl/seqset.go decodev2 refuses the same way).
	if uint64(nn) > uint64(d.Len()/nodeLen) {
		return nil, 0, binfmt.Errorf(file, base+2, binfmt.ErrFormat, "seqset claims %d nodes, %d bytes hold at most %d", nn, d.Len(), d.Len()/nodeLen)
	}
	s := &SeqSet{nodes: make([]seqNode, nn), size: int(size)}
	for i := range s.nodes {
		n := &s.nodes[i]
		n.base = d.U64()
		n.bits = make([]uint64, buckets)
		for j := range n.bits {
			n.bits[j] = d.U64()
		}
		d.U16() // height, not needed
		if span := uint64(buckets) * bitsPerBucket; d.Err() == nil && n.base > ^uint64(0)-span {
			return nil, 0, binfmt.Errorf(file, base+seqSetHdr+int64(i*nodeLen), binfmt.ErrFormat, "seqset node base %d overflows", n.base)
		}
	}
	if err := d.Err(); err != nil {
		return nil, 0, err
	}
	sort.Slice(s.nodes, func(i, j int) bool { return s.nodes[i].base < s.nodes[j].base })
	if got := s.Len(); got != int(size) {
		return s, int(d.Offset() - base), binfmt.Errorf(file, base+6, binfmt.ErrFormat, "seqset says %d sequences, nodes hold %d", size, got)
	}
	return s, int(d.Offset() - base), nil
}

// Size is the number of sequences the encoding claims (which should equal Len).
func (s *SeqSet) Size() int {
	if s == nil {
		return 0
	}
	return s.size
}

// Len counts the sequences in the set.
func (s *SeqSet) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, nd := range s.nodes {
		for _, w := range nd.bits {
			n += bits.OnesCount64(w)
		}
	}
	return n
}

// Contains reports whether seq is in the set.
func (s *SeqSet) Contains(seq uint64) bool {
	if s == nil {
		return false
	}
	// Nodes are sorted by base and all span the same number of sequences;
	// a corrupt set may hold overlapping nodes, so look at every node whose
	// span reaches seq.
	for i := sort.Search(len(s.nodes), func(i int) bool { return s.nodes[i].base > seq }) - 1; i >= 0; i-- {
		nd := s.nodes[i]
		off := seq - nd.base
		if off >= uint64(len(nd.bits))*bitsPerBucket {
			return false
		}
		if nd.bits[off/bitsPerBucket]&(1<<(off%bitsPerBucket)) != 0 {
			return true
		}
	}
	return false
}

// Each calls f for every sequence in ascending node order until f returns
// false (a corrupt set with overlapping nodes may repeat a sequence).
func (s *SeqSet) Each(f func(seq uint64) bool) {
	if s == nil {
		return
	}
	for _, nd := range s.nodes {
		for bi, w := range nd.bits {
			for w != 0 {
				seq := nd.base + uint64(bi)*bitsPerBucket + uint64(bits.TrailingZeros64(w))
				if !f(seq) {
					return
				}
				w &= w - 1
			}
		}
	}
}

// Seqs returns up to limit sequences of the set in order (limit <= 0: all).
func (s *SeqSet) Seqs(limit int) []uint64 {
	var out []uint64
	s.Each(func(seq uint64) bool {
		out = append(out, seq)
		return limit <= 0 || len(out) < limit
	})
	return out
}

// Ranges returns the set as maximal ascending runs. It allocates in
// proportion to the runs, so callers printing huge sets may prefer Len and
// Contains.
func (s *SeqSet) Ranges() seqset.Set {
	var out seqset.Set
	s.Each(func(q uint64) bool {
		out.Add(q)
		return true
	})
	return out
}
