package rehearse

import (
	"fmt"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// orphanDelay is how long after meta recovery a server deletes its orphans
// (nats-server jetstream_cluster.go: checkForOrphans after 30 s), with a
// margin for the poll.
const orphanDelay = 32 * time.Second

// statements sets every "what the server does next" of the report beside
// what the rehearsal saw. led is how long a meta leader had been seen when
// the watch ended (recovered says one was).
func statements(rep *report.Report, r *report.Rehearsal, led time.Duration, recovered bool) []report.RehearsalStatement {
	servers := map[string]report.RehearsalServer{}
	for _, s := range r.Servers {
		servers[s.Name] = s
	}
	deleted := map[string]bool{}
	for _, d := range r.Deleted {
		if d.Consumer == "" {
			deleted[d.Server+"\x00"+d.Account+"\x00"+d.Stream] = true
		}
	}
	var out []report.RehearsalStatement
	for _, f := range rep.Findings {
		for _, n := range f.Next {
			st := report.RehearsalStatement{Finding: f.Code, Server: n.Server}
			srv, ran := servers[n.Server]
			other := n.Release != "" && releaseLine(n.Release) != releaseLine(r.ServerVersion)
			switch n.Does {
			case report.NextDeletesStream:
				st.Statement = fmt.Sprintf("deletes its copy of stream %s > %s 30 s after meta recovery", n.Account, n.Stream)
				switch {
				case deleted[n.Server+"\x00"+n.Account+"\x00"+n.Stream]:
					st.Held, st.Observed = ptr(true), "the server removed the stream's folder"
				case other:
					st.Observed = fmt.Sprintf("said of %s, rehearsed on %s: the stream's folder is still there", n.Release, r.ServerVersion)
				case !ran || !srv.Started:
					st.Observed = "the server did not run to the end of the watch"
				case !recovered:
					st.Observed = "no meta leader was seen: meta recovery, and the orphan check after it, did not happen"
				case led < orphanDelay:
					st.Observed = fmt.Sprintf("the meta group recovered %s before the end of the watch, too late for the orphan check: watch longer", led.Round(time.Second))
				default:
					st.Held, st.Observed = ptr(false), fmt.Sprintf("a meta leader was seen for %s and the stream's folder is still there", led.Round(time.Second))
				}
			case report.NextRefusesJetStream:
				st.Statement = "refuses to start JetStream on its corrupt meta snapshot"
				refused := ran && (srv.Fatal != nil && strings.Contains(*srv.Fatal, "JetStream") || anyLine(srv.Lines, "Can't start JetStream"))
				switch {
				case refused:
					st.Held, st.Observed = ptr(true), "it logged that JetStream cannot start"
				case other:
					st.Observed = fmt.Sprintf("said of %s, rehearsed on %s: JetStream started", n.Release, r.ServerVersion)
				case ran && srv.Started:
					st.Held, st.Observed = ptr(false), "it ran to the end of the watch with no line saying JetStream could not start"
				default:
					st.Observed = "the server did not run to the end of the watch for another reason"
				}
			default:
				continue
			}
			out = append(out, st)
		}
	}
	return out
}

func anyLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func releaseLine(v string) string {
	p := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(p) < 2 {
		return v
	}
	return p[0] + "." + p[1]
}

func ptr[T any](v T) *T { return &v }
