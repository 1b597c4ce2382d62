package storeparse

import "sort"

// PayloadHit is a live message whose payload is one of
// ScanOptions.Payloads: a value a client published (a Jepsen history's
// :value), found at Seq.
type PayloadHit struct {
	Seq     uint64
	Payload string
}

// maxHitsPerPayload bounds the hits kept per payload looked for, so that
// the hits are bounded by the set (the history), never by the store: a
// value published once is stored once; a store holding one value many
// times (a republishing client) keeps the first few.
const maxHitsPerPayload = 2

// findPayload notes, while block b is read, that the counted message seq
// holds one of the payloads looked for.
func (b *BlockScan) findPayload(set map[string]bool, seq uint64, data []byte) {
	if set[string(data)] && len(b.found) < maxHitsPerPayload*len(set)+1 {
		b.found = append(b.found, PayloadHit{Seq: seq, Payload: string(data)})
	}
}

// collectPayloads keeps, of the hits of every block, those still live once
// tombstones, index.db deletes and limits are applied, at most
// maxHitsPerPayload per payload.
func (s *StreamScan) collectPayloads(setSize int) {
	per := map[string]int{}
	for i := range s.Blocks {
		b := &s.Blocks[i]
		for _, h := range b.found {
			if s.blockOf(h.Seq) == nil {
				continue
			}
			if per[h.Payload] >= maxHitsPerPayload {
				s.PayloadsCapped = true
				continue
			}
			per[h.Payload]++
			s.Payloads = append(s.Payloads, h)
		}
		if len(b.found) > maxHitsPerPayload*setSize {
			s.PayloadsCapped = true
		}
		b.found = nil
	}
	sort.Slice(s.Payloads, func(i, j int) bool { return s.Payloads[i].Seq < s.Payloads[j].Seq })
}
