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

// PeerRemoveRemedy removes corrupt ids with server removals
// (remedies.yaml: meta-corrupt-id-remove, group-corrupt-id-remove).
func PeerRemoveRemedy(m *model.Model, group string, ids []string) Prescription {
	if group == natsfmt.MetaGroup {
		return Prescribe(MetaCorruptIDRemove, Args{"ids": ids})
	}
	return Prescribe(GroupCorruptIDRemove, Args{"group": group, "ids": ids})
}

// StreamPeerRemoveCommand removes server's replica of one stream (a stream
// peer removal). The request's "peer" is a server name on every version
// and also a peer id from 2.15 (jetstream_api.go JSApiStreamRemovePeerRequest).
func StreamPeerRemoveCommand(stream, peer string) string {
	subject := "$JS.API.STREAM.PEER.REMOVE." + stream
	body := `{"peer":` + jsonString(peer) + `}`
	return "nats stream cluster peer-remove " + shellWord(stream) + " " + shellWord(peer) + "   # or: nats request " + ShellQuote(subject) + " " + ShellQuote(body)
}

// shellWord is s as one shell word: as it is when it holds nothing the
// shell reads, else single-quoted.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,/:=@+", r)) {
			return ShellQuote(s)
		}
	}
	if s == "" {
		return "''"
	}
	return s
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
