package storeparse

import "bytes"

// streamSourceKey is the header nats-server puts on every message a
// stream takes from a source (stream.go JSStreamSource): "<origin>[:<hash>]
// <origin sequence> <filter> <transform> [<origin identity>]" (the
// identity field from 2.15).
var streamSourceKey = []byte("Nats-Stream-Source:")

// maxSourceHeader bounds the value kept: a stream name, a sequence, two
// subjects and an identity.
const maxSourceHeader = 1024

// sourceHeader is the value of the Nats-Stream-Source header in a NATS
// header block, if any.
func sourceHeader(h []byte) (string, bool) {
	i := bytes.Index(h, streamSourceKey)
	if i < 0 || i > 0 && h[i-1] != '\n' {
		return "", false
	}
	v := h[i+len(streamSourceKey):]
	if j := bytes.IndexByte(v, '\r'); j >= 0 {
		v = v[:j]
	} else if j := bytes.IndexByte(v, '\n'); j >= 0 {
		v = v[:j]
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || len(v) > maxSourceHeader {
		return "", false
	}
	return string(v), true
}

// SourceHeader is the Nats-Stream-Source header of the stream's last live
// message that carries one, and that message's sequence: where a sourced
// stream stands in its origin. ok is false when no live message has one
// (a mirror's messages carry none).
func (s *StreamScan) SourceHeader() (seq uint64, value string, ok bool) {
	for i := len(s.Blocks) - 1; i >= 0; i-- {
		b := &s.Blocks[i]
		if b.srcSeq == 0 || s.blockOf(b.srcSeq) == nil {
			continue
		}
		return b.srcSeq, b.srcHdr, true
	}
	return 0, "", false
}
