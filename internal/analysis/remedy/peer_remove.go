package remedy

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// peerRemoveCommand removes a peer from the meta group by id. natscli reads
// an argument that starts with '@' as a file of arguments, and corrupt ids
// can hold quotes, so the raw API request is given, with the id JSON- and
// shell-quoted ("peer" takes a server name, "peer_id" an id).
func PeerRemoveCommand(id string) string {
	if !utf8.ValidString(id) {
		return fmt.Sprintf("# peer id %q holds bytes that are not UTF-8, which no JSON request can carry; remove it from every server's _meta_/peers.idx while all servers are stopped (back up first), or on 2.15+ use the quorum rescue and let the leader's peer state replace it", id)
	}
	body := fmt.Sprintf(`{"peer_id":%s}`, jsonString(id))
	cmd := "nats request '$JS.API.SERVER.REMOVE' " + ShellQuote(body)
	if natsfmt.ValidPeerID(id) {
		cmd = fmt.Sprintf("nats server cluster peer-remove -f %s   # or: %s", id, cmd)
	}
	return cmd
}

// peerRemoveRemedy removes corrupt ids with server removals
// (remedies.go: meta-corrupt-id-remove, group-corrupt-id-remove).
func PeerRemoveRemedy(m *model.Model, group string, ids []string) Prescription {
	if group == natsfmt.MetaGroup {
		return Prescribe("meta-corrupt-id-remove", Args{"ids": ids})
	}
	return Prescribe("group-corrupt-id-remove", Args{"group": group, "ids": ids})
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
