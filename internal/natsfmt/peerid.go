package natsfmt

import "crypto/sha256"

// PeerIDLen is the length of a raft peer (node) id (raft.go idLen).
const PeerIDLen = 8

// peerIDDigits is the alphabet of peer ids (accounts.go digits).
const peerIDDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NoLeaderPeer is what /jsz meta_cluster.peer holds when there is no meta
// leader: the server hashes the (empty) leader name, so every server of a
// leaderless cluster reports this same id. It is PeerID("").
const NoLeaderPeer = "fqA4S4SK"

// PeerID returns the raft peer id nats-server derives from a server name
// (events.go getHashSize with sysHashLen 8; the same in 2.10, 2.12 and
// 2.15): the first 8 bytes of the SHA-256 of the name, each taken modulo 62
// as an index into 0-9A-Za-z.
func PeerID(serverName string) string {
	sum := sha256.Sum256([]byte(serverName))
	var id [PeerIDLen]byte
	for i := range id {
		id[i] = peerIDDigits[sum[i]%byte(len(peerIDDigits))]
	}
	return string(id[:])
}

// ValidPeerID reports whether id could have been produced by PeerID: exactly
// 8 characters, each in 0-9A-Za-z. A bit flip in a stored id usually breaks
// this (for example '"kCGheKT' or 'yrzKKR@u'), but not always: flipping bit
// 5 of a letter swaps its case and yields another valid-looking id, so also
// compare against the known servers with BitDistance.
func ValidPeerID(id string) bool {
	if len(id) != PeerIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// BitDistance returns the Hamming distance between a and b counted in bits
// over their bytes. Bytes present in only one of them (different lengths)
// count as 8 differing bits each.
func BitDistance(a, b string) int {
	n := min(len(a), len(b))
	d := 8 * (max(len(a), len(b)) - n)
	for i := 0; i < n; i++ {
		x := a[i] ^ b[i]
		for x != 0 {
			d++
			x &= x - 1
		}
	}
	return d
}

// NearestPeer returns the element of known closest to id by BitDistance,
// and that distance; ok is false when known is empty. Ties go to the first
// in known's order.
func NearestPeer(id string, known []string) (nearest string, dist int, ok bool) {
	for _, k := range known {
		d := BitDistance(id, k)
		if !ok || d < dist {
			nearest, dist, ok = k, d, true
		}
	}
	return nearest, dist, ok
}

// Quorum is the number of votes a raft group of clusterSize peers needs
// (raft.go: clusterSize/2 + 1).
func Quorum(clusterSize int) int { return clusterSize/2 + 1 }
