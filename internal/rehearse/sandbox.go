// Package rehearse starts a bundle's servers on a copy of their stores, in a
// sandbox that reaches nothing outside this machine's loopback, watches them
// as the fixture generator's restart-on-copy does, and sets what they did
// beside what the analysis said they would do.
//
// The bundle is only read: every store is copied (shared with the bundle
// where the filesystem can clone files) into a scratch folder, the servers
// get configs written for the sandbox, and each config is refused unless
// every address in it is a loopback one.
package rehearse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsconf"
	"github.com/jsforensics/jsforensics/internal/storecrypt"
)

// sandbox is the scratch folder and the servers that run in it.
type sandbox struct {
	Dir     string
	Members []*member
	Copied  int64
	Cloned  int64
}

// plan makes a member of every server whose store the bundle holds.
func plan(b *bundle.Bundle, m *model.Model) ([]*member, error) {
	confs := configsByServer(b)
	var out []*member
	for _, s := range m.Servers {
		if s.StoreDir == "" {
			continue
		}
		mb := &member{Name: s.Name, Cluster: s.Cluster, Version: s.Version, StoreRoot: s.StoreDir, Conf: confs[s.Name], Files: map[string]string{}}
		ents, err := fs.ReadDir(b.FS, s.StoreDir)
		if err != nil {
			return nil, fmt.Errorf("%s: store %s: %w", s.Name, s.StoreDir, err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			mb.Accounts = append(mb.Accounts, e.Name())
			if _, err := fs.Stat(b.FS, path.Join(s.StoreDir, e.Name(), "_js_")); err == nil && e.Name() != "$SYS" {
				mb.SystemAccount = e.Name()
			}
		}
		if mb.Conf == nil {
			for _, a := range mb.Accounts {
				if publicAccountKey(a) {
					mb.leave("operator", "the bundle holds no config of this server, so no operator JWT: its accounts (operator mode, named by their public keys) are set up as config accounts under those keys; what the server does with their JWTs (expiry, limits, a resolver that lacks one) is not rehearsed")
					break
				}
			}
		}
		out = append(out, mb)
	}
	if len(out) == 0 {
		return nil, errors.New("the bundle holds no server's JetStream store: there is nothing to start")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	// A server without a cluster in the bundle but beside others that have
	// one is taken as their member: a standalone server's store has no
	// meta group.
	for _, mb := range out {
		if mb.Cluster == "" && len(out) > 1 {
			for _, o := range out {
				if o.Cluster != "" {
					mb.Cluster = o.Cluster
					break
				}
			}
		}
	}
	return out, nil
}

// configsByServer reads the bundle's nats-server configs and names each by
// its server_name; one whose name comes from the environment is left out.
func configsByServer(b *bundle.Bundle) map[string]*natsconf.Config {
	out := map[string]*natsconf.Config{}
	for _, c := range b.Configs {
		open := func(p string) ([]byte, error) { return fs.ReadFile(b.FS, p) }
		pc := natsconf.Parse(c.Path, c.Data, open)
		if v, ok := pc.Lookup("server_name"); ok && v.Text != "" {
			out[v.Text] = pc
		}
	}
	return out
}

// layOut gives each member its folder, ports and routes, and finds the
// files its config names.
func (sb *sandbox) layOut(b *bundle.Bundle) error {
	// Every port is held open until all are drawn: a port closed at once
	// may be handed out again, and two servers would then share it.
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for _, mb := range sb.Members {
		mb.Dir = filepath.Join(sb.Dir, safeName(mb.Name))
		if err := os.MkdirAll(mb.Dir, 0o700); err != nil {
			return err
		}
		for _, p := range []*int{&mb.ClientPort, &mb.ClusterPort, &mb.HTTPPort} {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			held = append(held, l)
			*p = l.Addr().(*net.TCPAddr).Port
		}
	}
	for _, mb := range sb.Members {
		for _, o := range sb.Members {
			if o != mb && o.Cluster == mb.Cluster && mb.Cluster != "" {
				mb.Routes = append(mb.Routes, fmt.Sprintf("nats-route://127.0.0.1:%d", o.ClusterPort))
			}
		}
		if mb.Conf == nil {
			continue
		}
		dir := path.Dir(mb.Conf.Path)
		for _, k := range []string{"operator", "operators", "trusted"} {
			v, ok := mb.Conf.Lookup(k)
			if !ok {
				continue
			}
			vals := v.List
			if vals == nil {
				vals = []natsconf.Value{v}
			}
			for _, e := range vals {
				if strings.HasPrefix(e.Text, "eyJ") || e.Text == "" {
					continue
				}
				if p := inBundle(b, dir, e.Text); p != "" {
					mb.Files[e.Text] = filepath.Join(mb.Dir, "conf", safeName(path.Base(p)))
				}
			}
		}
		if v, ok := mb.Conf.Lookup("resolver", "dir"); ok && v.Text != "" {
			if p := inBundle(b, dir, v.Text); p != "" {
				mb.Files[v.Text] = filepath.Join(mb.Dir, "resolver")
			}
		}
	}
	return nil
}

// inBundle finds a file a config names: relative to the config's folder, or
// an absolute path whose tail the bundle holds under the config's folder or
// its parent.
func inBundle(b *bundle.Bundle, confDir, name string) string {
	cands := []string{}
	if !strings.HasPrefix(name, "/") {
		cands = append(cands, path.Clean(path.Join(confDir, name)))
	}
	base := path.Base(name)
	cands = append(cands, path.Join(confDir, base), path.Join(path.Dir(confDir), base))
	for _, c := range cands {
		if strings.HasPrefix(c, "../") || c == ".." {
			continue
		}
		if _, err := fs.Stat(b.FS, c); err == nil {
			return c
		}
	}
	return ""
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// storeBytes sums the sizes of the files under the members' stores and the
// files their configs name.
func storeBytes(b *bundle.Bundle, ms []*member) (int64, error) {
	var n int64
	for _, mb := range ms {
		err := fs.WalkDir(b.FS, mb.StoreRoot, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				info, err := d.Info()
				if err != nil {
					return err
				}
				n += info.Size()
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// checkSpace refuses a copy the temporary folder has no room for (with a
// margin for what the servers write while they run).
func checkSpace(dir string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("temporary folder %s: %w", dir, err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	want := need + need/10 + 64<<20
	if free < want {
		return fmt.Errorf("temporary folder %s has %s free; the copies of the stores need %s (with room for what the servers write): give another with --tmpdir", dir, human(free), human(want))
	}
	return nil
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// copyTree copies the bundle's folder src into dst; files of a bundle on
// disk are cloned where the filesystem can (FICLONE), else copied.
func (sb *sandbox) copyTree(ctx context.Context, b *bundle.Bundle, src, dst string) error {
	return fs.WalkDir(b.FS, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, src), "/")
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		return sb.copyFile(b, p, target)
	})
}

func (sb *sandbox) copyFile(b *bundle.Bundle, p, target string) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if b.Root != "" {
		if in, err := os.Open(filepath.Join(b.Root, filepath.FromSlash(p))); err == nil {
			info, serr := in.Stat()
			cerr := unix.IoctlFileClone(int(out.Fd()), int(in.Fd()))
			in.Close()
			if cerr == nil && serr == nil {
				sb.Copied += info.Size()
				sb.Cloned += info.Size()
				return out.Close()
			}
		}
	}
	in, err := b.FS.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	n, err := io.Copy(out, in)
	sb.Copied += n
	if err != nil {
		return fmt.Errorf("copying %s: %w", p, err)
	}
	return out.Close()
}

// cipherOf finds the cipher of an encrypted store: the first stream key file
// the key opens says it (storecrypt tries both, as the server does).
func cipherOf(b *bundle.Bundle, root, key string) string {
	accs, _ := fs.ReadDir(b.FS, root)
	for _, a := range accs {
		streams, _ := fs.ReadDir(b.FS, path.Join(root, a.Name(), "streams"))
		for _, s := range streams {
			kf := path.Join(root, a.Name(), "streams", s.Name(), "meta.key")
			data, err := fs.ReadFile(b.FS, kf)
			if err != nil {
				continue
			}
			if k, err := storecrypt.OpenKeyFile(kf, data, []string{key}, a.Name(), s.Name()); err == nil {
				return strings.ToLower(k.Cipher.String())
			}
		}
	}
	return ""
}

// publicAccountKey says a name is an account's public key (nkeys: 56
// characters of base32 starting with A), as operator mode names accounts.
func publicAccountKey(s string) bool {
	if len(s) != 56 || s[0] != 'A' {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}
