package binfmt

import (
	"crypto/sha256"
	"hash"

	"github.com/minio/highwayhash"
)

// NewHH64 returns nats-server's checksum: HighwayHash-64 keyed with the
// SHA-256 of key (a stream name, "<stream>-<block>", a raft group name, or
// "<stream>/<consumer>"). The 8 bytes of Sum are stored as they come.
func NewHH64(key string) hash.Hash64 {
	k := sha256.Sum256([]byte(key))
	h, err := highwayhash.New64(k[:])
	if err != nil {
		// Only a key that is not 32 bytes fails, and a SHA-256 always is.
		panic(err)
	}
	return h
}

// HH64 hashes the concatenation of parts with NewHH64(key).
func HH64(key string, parts ...[]byte) [8]byte {
	h := NewHH64(key)
	for _, p := range parts {
		h.Write(p)
	}
	var out [8]byte
	h.Sum(out[:0])
	return out
}
