package remedy

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
)

// readdsRemovedMetaPeer says whether nats-server v lets a peer removed from
// the meta group back in when it still talks raft 5 minutes after the
// removal. raft.go trackPeer: from 2.11.2 n.removed holds the time of the
// removal and a removed peer counts as removed only for peerRemoveTimeout
// (5 min), after which the leader proposes to add it again (read in
// 2.11.2, 2.11.4, 2.11.6, 2.11.17, 2.12.1, 2.12.4, 2.12.15, 2.14.10, 2.15.2
// and 2.15.3); 2.10.22, 2.10.27, 2.11.0 and 2.11.1 keep a removed peer out
// for good (v2.11.1 trackPeer has no timeout; v2.11.2 raft.go:3093,
// v2.15.2 raft.go:4230 have it). On 2.15 only unmanaged groups add peers
// this way (v2.15.2 raft.go:4235 `!n.managed && n.State() == Leader`):
// stream and consumer groups are Managed (jetstream_cluster.go:4088
// createRaftGroup), the meta group is not (jetstream_cluster.go:1367), so
// it still does. Run (testdata/remedies/readd-*.json, `go run . readd` in
// testdata/gen): a running server removed with $JS.API.SERVER.REMOVE and
// restarted 20 s later was back in the meta group 5 min after its removal
// on 2.11.17 and 2.15.2, and still out after 7 min on 2.10.27. known is
// false where no source was read:
// 2.13 (never released), past the newest release read of a line, 2.16+.
func ReaddsRemovedMetaPeer(v string) (yes, known bool) {
	mi, pa, ok := releases.SourceRead(v)
	if !ok {
		return false, false
	}
	switch mi {
	case 10:
		return false, true
	case 11:
		return pa >= 2, true
	}
	return true, true
}

// readdNote warns, for a remedy that removes servers from the meta group,
// that the bundle's versions may let a removed server back in, or says that
// it cannot tell for a version; "" where every version keeps it out.
func ReaddNote(m *model.Model) string {
	var yes, unknown []string
	for _, s := range m.Servers {
		if s.Version == "" {
			continue
		}
		switch y, known := ReaddsRemovedMetaPeer(s.Version); {
		case !known:
			unknown = model.AppendUnique(unknown, s.Version)
		case y:
			yes = model.AppendUnique(yes, s.Version)
		}
	}
	const rule = "2.11.2 to 2.15.3 let a peer removed from the meta group back in 5 minutes after its removal if it still talks raft, 2.10 and 2.11.0-2.11.1 do not (raft.go trackPeer; run: back after 5 min on 2.11.17 and 2.15.2, still out after 7 min on 2.10.27)"
	switch {
	case len(unknown) > 0 || len(yes) == 0 && len(m.Servers) > 0 && releases.MinVersion(m) == "":
		which := strings.Join(unknown, ", ")
		if which == "" {
			which = "the bundle's servers (no version in the bundle)"
		}
		return fmt.Sprintf("Whether a removed peer comes back cannot be told for %s: %s. Make sure none of the removed ids belongs to a running server.", which, rule)
	case len(yes) > 0:
		return fmt.Sprintf("nats-server %s lets a peer removed from the meta group back in 5 minutes after its removal if it still talks raft (raft.go trackPeer, read in the source of 2.11.2 to 2.15.3; run: a removed server restarted was back after 5 min on 2.11.17 and 2.15.2): make sure none of the removed ids belongs to a running server.", strings.Join(yes, ", "))
	}
	return ""
}
