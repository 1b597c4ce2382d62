package facts

import (
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// defaultSyncInterval is nats-server's default filestore sync interval
// (filestore.go defaultSyncInterval, every version checked: 2 minutes):
// writes acknowledged in the last interval before a power loss may be gone.
const defaultSyncInterval = 2 * time.Minute

// exposures lists, for every unclean stop on the timeline, the stream
// copies of that server whose blocks hold messages timestamped in the sync
// interval before it.
func exposures(m *model.Model) []model.Exposure {
	var out []model.Exposure
	for i, e := range m.Timeline {
		if e.Kind != string(natsfmt.EventUncleanStop) {
			continue
		}
		srv := m.ServerOf(e.Server)
		if srv == nil {
			continue
		}
		x := model.Exposure{Server: srv.Ref(), Stop: e.Time, Timeline: i, Sync: model.SyncSetting{Interval: defaultSyncInterval, Source: "the default; no capture or config in the bundle says otherwise"}}
		if srv.Sync != nil {
			x.Sync = *srv.Sync
		} else if srv.SyncUnknown != "" {
			x.Sync.Source = "unknown: " + srv.SyncUnknown + "; the window shown is the default's (2m0s)"
		}
		from := e.Time.Add(-x.Sync.Interval).UnixNano()
		to := e.Time.UnixNano()
		for _, st := range m.Streams {
			for _, c := range st.Copies {
				if !m.Same(c.Server, srv.Ref()) || x.Sync.Always {
					continue
				}
				es := model.ExposedStream{Account: st.Account, Stream: st.Name, Path: c.Path, Replicas: max(st.Replicas, c.Replicas)}
				for _, b := range c.Blocks {
					if b.Msgs == 0 || b.LastTS < from || b.FirstTS > to {
						continue
					}
					if es.Messages == 0 {
						es.FirstSeq = b.FirstSeq
					}
					es.Messages += b.Msgs
					es.LastSeq = max(es.LastSeq, b.LastSeq)
				}
				if es.Messages > 0 {
					x.Streams = append(x.Streams, es)
				}
			}
		}
		out = append(out, x)
	}
	return out
}
