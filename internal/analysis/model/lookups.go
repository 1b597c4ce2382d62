package model

import (
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// recentlySeen is how recent a raftz last_seen must be for the peer to count
// as alive: heartbeats are 1 s apart and a leader steps down after 10 s of
// silence.
const RecentlySeen = 30 * time.Second

func SortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

// peerID is the raft node id nats-server derives from a server name.
func PeerID(name string) string { return natsfmt.PeerID(name) }
