package analysis

import (
	"io/fs"
	"regexp"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Loading for durability-exposure and asset-lost: the sync settings, the
// blocks' time spans, the API deletes the meta WALs record.

// BlockSpan is one message block's live messages and the sequences and
// times they span.
type BlockSpan struct {
	FirstSeq, LastSeq uint64
	FirstTS, LastTS   int64
	Msgs              uint64
}

func blockSpans(bs []storeparse.BlockScan) []BlockSpan {
	out := make([]BlockSpan, 0, len(bs))
	for _, b := range bs {
		out = append(out, BlockSpan{FirstSeq: b.FirstSeq, LastSeq: b.LastSeq, FirstTS: b.FirstTS, LastTS: b.LastTS, Msgs: b.Msgs})
	}
	return out
}

// syncFrom records a server's sync setting from a captured JetStream
// config (/varz jetstream.config or /jsz config).
func (l *loader) syncFrom(srv *Server, c *capture.JetStreamConfig, source string) {
	if c == nil || srv.Sync != nil {
		return
	}
	if c.SyncInterval == 0 && !c.SyncAlways {
		return // an older server that does not report it
	}
	srv.Sync = &SyncSetting{Interval: c.SyncInterval, Always: c.SyncAlways, Source: source}
}

// Config file lines (opts.go parseJetStream): "sync_interval" or "sync",
// a duration or "always"; server_name names the server.
var (
	confJetStreamRE = regexp.MustCompile(`(?m)^\s*jetstream\s*[:=]?\s*\{`)
	confSyncRE      = regexp.MustCompile(`(?m)^\s*(?:sync_interval|sync)\s*[:=]?\s*"?([^"\s#,}]+)`)
	confNameRE      = regexp.MustCompile(`(?m)^\s*server_name\s*[:=]?\s*"?([^"\s#,}]+)`)
)

// maxConfFile bounds a file read to see whether it is a server config.
const maxConfFile = 256 << 10

// durability reads sync settings from server configs found in the bundle
// by content, then the exposures of the unclean stops.
func (l *loader) durability() {
	l.syncFromConfigs()
	l.m.Exposures = exposures(l.m)
}

// syncFromConfigs looks for nats-server config files among the bundle's
// small files that are no store, log or capture, and takes their sync
// setting for the server they name (or for every server without one).
func (l *loader) syncFromConfigs() {
	known := map[string]bool{}
	for _, lg := range l.b.Logs {
		known[lg.Path] = true
	}
	for _, c := range l.b.Captures {
		known[c.Path] = true
	}
	stores := map[string]bool{}
	for _, st := range l.b.Stores {
		stores[st.Dir] = true
	}
	_ = fs.WalkDir(l.b.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if stores[p] {
				return fs.SkipDir
			}
			return nil
		}
		if known[p] || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > maxConfFile {
			return nil
		}
		b, err := fs.ReadFile(l.b.FS, p)
		if err != nil || !confJetStreamRE.Match(b) {
			return nil
		}
		m := confSyncRE.FindSubmatch(b)
		if m == nil {
			return nil
		}
		set := SyncSetting{Source: "config " + p}
		if v := string(m[1]); v == "always" {
			set.Always = true
		} else if d, err := time.ParseDuration(v); err == nil {
			set.Interval = d
		} else {
			l.note("%s: sync setting %q not understood", p, v)
			return nil
		}
		for _, s := range l.m.Servers {
			if n := confNameRE.FindSubmatch(b); n != nil && string(n[1]) != s.Name {
				continue
			}
			if s.Sync == nil {
				set := set
				s.Sync = &set
			}
		}
		return nil
	})
}

// metaRemoval records an API delete the meta WAL holds.
func (l *loader) metaRemoval(srv *Server, op *raftlog.Op, idx uint64, file string) {
	switch {
	case op.Code == raftlog.OpRemoveStream && op.Stream != nil:
		l.m.MetaRemovals = append(l.m.MetaRemovals, MetaRemoval{Server: srv.ID, Account: op.Stream.Account(), Stream: op.Stream.Config.Name, Index: idx, File: file})
	case op.Code == raftlog.OpRemoveConsumer && op.Consumer != nil:
		l.m.MetaRemovals = append(l.m.MetaRemovals, MetaRemoval{Server: srv.ID, Account: op.Consumer.Account(), Stream: op.Consumer.Stream, Consumer: op.Consumer.Name, Index: idx, File: file})
	}
}
