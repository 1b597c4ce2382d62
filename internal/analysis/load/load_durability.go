package load

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsconf"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Loading for durability-exposure and asset-lost: the sync settings, the
// blocks' time spans, the API deletes the meta WALs record.

func blockSpans(bs []storeparse.BlockScan) []model.BlockSpan {
	out := make([]model.BlockSpan, 0, len(bs))
	for _, b := range bs {
		out = append(out, model.BlockSpan{FirstSeq: b.FirstSeq, LastSeq: b.LastSeq, FirstTS: b.FirstTS, LastTS: b.LastTS, Msgs: b.Msgs})
	}
	return out
}

// syncFrom records a server's sync setting from a captured JetStream
// config (/varz jetstream.config or /jsz config).
func (l *loader) syncFrom(srv *model.Server, c *capture.JetStreamConfig, source string) {
	if c == nil || srv.Sync != nil {
		return
	}
	if c.SyncInterval == 0 && !c.SyncAlways {
		return // an older server that does not report it
	}
	srv.Sync = &model.SyncSetting{Interval: c.SyncInterval, Always: c.SyncAlways, Source: source}
}

// maxIncludedConfig bounds an included config file read (a config is a
// few KiB; the bundle reader holds configs up to its sniff size).
const maxIncludedConfig = 256 << 10

// durability takes the sync settings of the server configs as read
// (readConfigs); the exposures of the unclean stops are a fact
// (facts.FactExposures).
func (l *loader) durability(configs []serverConfig) {
	l.syncFromConfigs(configs)
}

// serverConfig is what one config file says of the server it configures,
// as natsconf read it.
type serverConfig struct {
	path string
	// name is server_name; nameVar the variable it is set from when the
	// bundle does not define it (the Helm chart's $SERVER_NAME).
	name, nameVar string
	hasName       bool
	sync          *model.SyncSetting
	// unknown says why the sync setting cannot be told from this config
	// (a value from the environment, an include not in the bundle, a
	// syntax error), "" when the config says it or says nothing.
	unknown string
}

// readServerConfig parses one config the bundle reader found (includes
// read through the bundle: the path as written, else the file of that
// name beside the config). held are the files read so far: the configs
// the bundle reader sniffed, and the includes read here, kept so that an
// include several configs name is read once.
func readServerConfig(fsys fs.FS, c bundle.Config, held map[string][]byte) serverConfig {
	open := func(p string) ([]byte, error) {
		try := []string{path.Clean(strings.TrimPrefix(p, "/")), path.Join(path.Dir(c.Path), path.Base(p))}
		var err error
		for _, t := range try {
			if b, ok := held[t]; ok {
				return b, nil
			}
			var f fs.File
			if f, err = fsys.Open(t); err != nil {
				continue
			}
			b, rerr := io.ReadAll(io.LimitReader(f, maxIncludedConfig+1))
			f.Close()
			if rerr != nil {
				return nil, rerr
			}
			if len(b) > maxIncludedConfig {
				return nil, fmt.Errorf("%s: more than %d bytes", t, maxIncludedConfig)
			}
			held[t] = b
			return b, nil
		}
		return nil, err
	}
	conf := natsconf.Parse(c.Path, c.Data, open)
	sc := serverConfig{path: c.Path}
	if v, ok := conf.Lookup("server_name"); ok {
		sc.hasName = true
		sc.name, sc.nameVar = v.Text, v.Var
	}
	var v natsconf.Value
	ok := false
	for _, key := range []string{"sync_interval", "sync"} {
		if v, ok = conf.Lookup("jetstream", key); ok {
			break
		}
	}
	set := model.SyncSetting{Source: "config " + c.Path}
	switch {
	case ok && v.Unresolved():
		sc.unknown = fmt.Sprintf("%s sets jetstream sync_interval from $%s, which the bundle does not define (the server takes it from its environment)", c.Path, v.Var)
	case ok && strings.EqualFold(v.Text, "always"):
		set.Always = true
		sc.sync = &set
	case ok:
		// A duration string, or a bare number of seconds (opts.go
		// parseDuration).
		if d, err := time.ParseDuration(v.Text); err == nil {
			set.Interval = d
			sc.sync = &set
		} else if n, err := strconv.ParseInt(v.Text, 10, 64); err == nil && n >= 0 {
			set.Interval = time.Duration(n) * time.Second
			sc.sync = &set
		} else {
			sc.unknown = fmt.Sprintf("%s: jetstream sync_interval %q not understood", c.Path, v.Text)
		}
	case conf.Err != nil:
		sc.unknown = fmt.Sprintf("%s does not parse past %v, and sync_interval is not set before that", c.Path, conf.Err)
	case len(conf.MissingIncludes) > 0:
		sc.unknown = fmt.Sprintf("%s includes %s, which the bundle does not hold, and may set sync_interval there", c.Path, strings.Join(conf.MissingIncludes, ", "))
	}
	if sc.sync != nil && !conf.Complete() {
		// A later include or the part past a syntax error may override it.
		sc.sync.Source += " (not read whole)"
	}
	return sc
}

// syncFromConfigs takes each config's sync setting for its server: the one
// it names, else the one whose store sits in the config's folder, else,
// when every config of the bundle says the same (one chart rendered for
// every server), every server without a setting. A setting the bundle
// cannot tell is unknown for the server, never the default.
func (l *loader) syncFromConfigs(configs []serverConfig) {
	var loose []serverConfig
	for _, sc := range configs {
		if sc.sync == nil && sc.unknown == "" {
			continue // says nothing of sync: the server's default
		}
		if srv := l.configServer(sc); srv != nil {
			if srv.Sync == nil && srv.SyncUnknown == "" {
				srv.Sync, srv.SyncUnknown = sc.sync, sc.unknown
			}
			continue
		}
		loose = append(loose, sc)
	}
	if len(loose) == 0 {
		return
	}
	same := true
	for _, sc := range loose[1:] {
		a, b := sc.sync, loose[0].sync
		if (a == nil) != (b == nil) || a != nil && (a.Always != b.Always || a.Interval != b.Interval) {
			same = false
		}
	}
	for _, s := range l.m.Servers {
		if s.Sync != nil || s.SyncUnknown != "" {
			continue
		}
		switch {
		case same && loose[0].sync != nil:
			set := *loose[0].sync
			if len(loose) > 1 {
				set.Source = fmt.Sprintf("%d configs that name no server of the bundle, all alike (%s)", len(loose), loose[0].path)
			}
			s.Sync = &set
		case same:
			s.SyncUnknown = loose[0].unknown
		default:
			var paths []string
			for _, sc := range loose {
				paths = append(paths, sc.path)
			}
			s.SyncUnknown = fmt.Sprintf("the configs %s name no server of the bundle (or name it from the environment) and set sync differently: which is this server's cannot be told", strings.Join(paths, ", "))
		}
	}
}

// configServer is the server a config is for: the one server_name names,
// else (no name, or a name from the environment) the one server whose
// store lies under the config's folder; nil when neither tells.
func (l *loader) configServer(sc serverConfig) *model.Server {
	if sc.hasName && sc.nameVar == "" {
		return l.m.Server(sc.name)
	}
	dir := path.Dir(sc.path)
	var found *model.Server
	for _, s := range l.m.Servers {
		if s.StoreDir == "" || dir == "." || s.StoreDir != dir && !strings.HasPrefix(s.StoreDir, dir+"/") {
			continue
		}
		if found != nil {
			return nil // the folder holds more than one server's store
		}
		found = s
	}
	return found
}

// metaRemoval records an API delete the meta WAL holds.
func (l *loader) metaRemoval(srv *model.Server, op *raftlog.Op, idx uint64, file string) {
	switch {
	case op.Code == raftlog.OpRemoveStream && op.Stream != nil:
		l.m.MetaRemovals = append(l.m.MetaRemovals, model.MetaRemoval{Server: srv.ID, Account: op.Stream.Account(), Stream: op.Stream.Config.Name, Index: idx, File: file})
	case op.Code == raftlog.OpRemoveConsumer && op.Consumer != nil:
		l.m.MetaRemovals = append(l.m.MetaRemovals, model.MetaRemoval{Server: srv.ID, Account: op.Consumer.Account(), Stream: op.Consumer.Stream, Consumer: op.Consumer.Name, Index: idx, File: file})
	}
}
