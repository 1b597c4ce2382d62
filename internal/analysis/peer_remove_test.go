package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
)

func TestPeerRemoveCommandQuotes(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"@uYMtjaW", `nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"@uYMtjaW"}'`},
		{`"kCGheKT`, `nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"\"kCGheKT"}'`},
		{"it's", `nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"it'\''s"}'`},
		{"yrzKKRBt", `nats server cluster peer-remove -f yrzKKRBt   # or: nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"yrzKKRBt"}'`},
	} {
		if got := remedy.PeerRemoveCommand(tc.id); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.id, got, tc.want)
		}
	}
	if got := remedy.PeerRemoveCommand("ab\xffcdefg"); !strings.HasPrefix(got, "#") {
		t.Errorf("non-UTF-8 id: %s", got)
	}
}
