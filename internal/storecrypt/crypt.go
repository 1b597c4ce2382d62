// Package storecrypt opens JetStream stores encrypted at rest with the
// operator's key: it derives every asset's keys as nats-server does, and
// presents the bundle's files through an fs.FS (FS) in which each sealed
// file reads as the plain file the parsers already decode. storeparse and
// raftlog know nothing of encryption; every check then runs on an
// encrypted store as on a plain one. The formats are in FORMAT.md.
package storecrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// Cipher is a store cipher (the jetstream `cipher` setting).
type Cipher int

// The ciphers in nats-server's order (filestore.go StoreCipher: ChaCha is
// the zero value, which is why the raft WAL stores, created without a
// cipher, use it whatever the configuration says).
const (
	ChaCha Cipher = iota
	AES
)

func (c Cipher) String() string {
	if c == AES {
		return "aes"
	}
	return "chacha"
}

// StructKeyFile is the structure named when a key file (meta.key, N.key)
// is damaged: too short, or not opening under a key that opens its
// stream's other key files.
const StructKeyFile binfmt.Structure = "key file"

// ErrWrongKey: none of the given keys opens a key file. It is no
// corruption: the store was sealed under another key.
var ErrWrongKey = errors.New("the given key does not open it")

// seedSize is the asset key seed genEncryptionKeys draws.
const seedSize = 32

// minKeyFile is nats-server's minMetaKeySize / minBlkKeySize: the shortest
// key file (AES-GCM: 16-byte nonce, 32-byte seed, 16-byte tag) it accepts.
const minKeyFile = 64

// aead is genEncryptionKey: XChaCha20-Poly1305 (24-byte nonce) or AES-GCM
// with a 16-byte nonce, keyed by a 32-byte seed.
func aead(c Cipher, key []byte) (cipher.AEAD, error) {
	if c == AES {
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCMWithNonceSize(b, b.BlockSize())
	}
	return chacha20poly1305.NewX(key)
}

// prf is jetstream.go jsKeyGen: HMAC-SHA256 keyed by the configured key
// over info (the account name, or the raft group name for WAL stores) and
// the context (the asset's name).
func prf(key, info, context string) []byte {
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(info))
	h.Write([]byte(context))
	return h.Sum(nil)
}

// AssetKey is a key file opened: the asset's seed and the key file's
// nonce, from which its AEAD (meta.inf, index.db, o.dat) and, for a block,
// its stream cipher derive.
type AssetKey struct {
	Cipher   Cipher
	KeyIndex int // which of the given keys opened it (0: key, 1: prev_encryption_key)
	seed     []byte
	nonce    []byte
}

// OpenKeyFile opens a key file (nonce ‖ seal(seed)) written by
// genEncryptionKeys under context, trying every key with both ciphers as
// nats-server's decryptMeta and convertCipher do. A file too short is a
// *binfmt.CorruptError stamped StructKeyFile; one no key opens wraps
// ErrWrongKey. Neither error holds a key.
func OpenKeyFile(file string, data []byte, keys []string, info, context string) (*AssetKey, error) {
	if len(data) < minKeyFile {
		return nil, binfmt.Stamp(binfmt.Errorf(file, int64(len(data)), binfmt.ErrTruncated,
			"key file of %d bytes; nats-server writes nonce, sealed seed and tag, at least %d", len(data), minKeyFile), StructKeyFile)
	}
	for ki, key := range keys {
		for _, c := range []Cipher{ChaCha, AES} {
			kek, err := aead(c, prf(key, info, context))
			if err != nil {
				continue
			}
			ns := kek.NonceSize()
			if len(data) < ns+kek.Overhead() {
				continue
			}
			seed, err := kek.Open(nil, data[:ns], data[ns:], nil)
			if err != nil || len(seed) != seedSize {
				continue
			}
			return &AssetKey{Cipher: c, KeyIndex: ki, seed: seed, nonce: append([]byte(nil), data[:ns]...)}, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", file, ErrWrongKey)
}

// Open unseals nonce ‖ ciphertext ‖ tag, as meta.inf, index.db (less its
// checksum) and o.dat are written. A failure is an ErrChecksum
// *binfmt.CorruptError of the structure s: the bytes changed.
func (k *AssetKey) Open(file string, s binfmt.Structure, sealed []byte) ([]byte, error) {
	ae, err := aead(k.Cipher, k.seed)
	if err != nil {
		return nil, err
	}
	ns := ae.NonceSize()
	if len(sealed) < ns+ae.Overhead() {
		return nil, binfmt.Stamp(binfmt.Errorf(file, int64(len(sealed)), binfmt.ErrTruncated,
			"sealed file of %d bytes, shorter than its %d-byte nonce and %d-byte tag", len(sealed), ns, ae.Overhead()), s)
	}
	plain, err := ae.Open(nil, sealed[:ns], sealed[ns:], nil)
	if err != nil {
		return nil, binfmt.Stamp(binfmt.Errorf(file, int64(ns), binfmt.ErrChecksum,
			"sealed %s (%s) does not authenticate under its asset key, which opened: its bytes changed", s, k.Cipher), s)
	}
	return plain, nil
}

// streamAt is genBlockEncryptionKey positioned at byte off of the block:
// ChaCha20 (XChaCha20 with the 24-byte nonce) or AES-CTR, whose keystream
// starts at offset 0 of the file and runs over every byte.
func (k *AssetKey) streamAt(off int64) (cipher.Stream, error) {
	if off < 0 {
		return nil, fmt.Errorf("negative offset %d", off)
	}
	var s cipher.Stream
	var skip int64
	switch k.Cipher {
	case AES:
		b, err := aes.NewCipher(k.seed)
		if err != nil {
			return nil, err
		}
		if len(k.nonce) != b.BlockSize() {
			return nil, fmt.Errorf("AES-CTR needs a %d-byte nonce, the key file has %d", b.BlockSize(), len(k.nonce))
		}
		// Go's CTR counts the whole 16-byte IV big-endian.
		iv := append([]byte(nil), k.nonce...)
		carry := uint64(off / aes.BlockSize)
		for i := len(iv) - 1; i >= 0 && carry > 0; i-- {
			sum := uint64(iv[i]) + carry&0xff
			iv[i] = byte(sum)
			carry = carry>>8 + sum>>8
		}
		s, skip = cipher.NewCTR(b, iv), off%aes.BlockSize
	default:
		c, err := chacha20.NewUnauthenticatedCipher(k.seed, k.nonce)
		if err != nil {
			return nil, err
		}
		const block = 64
		if off/block > 1<<32-1 {
			return nil, fmt.Errorf("offset %d is past ChaCha20's 256 GiB keystream", off)
		}
		c.SetCounter(uint32(off / block))
		s, skip = c, off%block
	}
	if skip > 0 {
		var discard [64]byte
		s.XORKeyStream(discard[:skip], discard[:skip])
	}
	return s, nil
}
