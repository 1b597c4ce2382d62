package bundle

import (
	"io/fs"
	"path"
	"slices"
	"sort"
)

// Store is a JetStream store root: the folder nats-server calls
// <store_dir>/jetstream, holding one folder per account.
type Store struct {
	Dir      string    `json:"dir"`      // relative to the bundle root; "." when the bundle is the store
	Accounts []Account `json:"accounts"` // accounts with a streams/ folder, sorted by name
	// SysAccount is the account folder holding _js_ (raft groups): "$SYS" in
	// config mode, an A… NKey in operator mode, "" for a non-clustered store.
	SysAccount string   `json:"sys_account,omitempty"`
	Groups     []string `json:"groups,omitempty"` // folder names under <SysAccount>/_js_, sorted
	// NameCandidates are server names the store's path suggests, most
	// likely first. The analysis confirms one by its raft peer id.
	NameCandidates []string `json:"name_candidates"`
	// Logs and Captures hint at the logs and captures most likely from the
	// same server (same name candidate, or same server folder), by path.
	Logs     []string `json:"logs,omitempty"`
	Captures []string `json:"captures,omitempty"`
}

// Account is one account folder of a store.
type Account struct {
	Name    string   `json:"name"`
	Streams []string `json:"streams"` // folder names under streams/, sorted, verbatim (a leading "." marks a stream being deleted)
}

// streamFiles are the names any filestore stream folder holds at least one
// of (formats.md 1.2); consumer-only or half-deleted folders still qualify
// through their neighbours.
var streamFiles = []string{"meta.inf", "meta.sum", "meta.key", "msgs", "obs"}

// groupFiles are the names a raft group folder holds (formats.md 1.3).
var groupFiles = []string{"peers.idx", "tav.idx", "meta.inf", "msgs", "snapshots"}

// sniffStore reports whether dir is a store root, and its content if so. A
// folder is a store root when one of its sub-folders holds either a streams/
// folder with a stream that looks like a filestore stream, or a _js_ folder
// with a group that looks like a raft group. Once it is one, accounts whose
// streams/ is empty (a fresh account) are listed too.
// Checking the children keeps look-alikes out, such as the
// accounts/<acc>/streams/<stream>/replicas tree of a `nats audit gather`
// archive.
func sniffStore(fsys fs.FS, dir string, ents []fs.DirEntry) (Store, bool) {
	st := Store{Dir: dir, Accounts: []Account{}}
	seen := false // one stream or group that looks the part
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		acc := path.Join(dir, e.Name())
		sub, err := fs.ReadDir(fsys, acc)
		if err != nil {
			continue
		}
		for _, s := range sub {
			if !s.IsDir() {
				continue
			}
			switch s.Name() {
			case "streams":
				names, like, ok := childrenLike(fsys, path.Join(acc, "streams"), streamFiles)
				if ok {
					st.Accounts = append(st.Accounts, Account{Name: e.Name(), Streams: names})
					seen = seen || like
				}
			case "_js_":
				names, like, ok := childrenLike(fsys, path.Join(acc, "_js_"), groupFiles)
				if ok && st.SysAccount == "" {
					st.SysAccount, st.Groups = e.Name(), names
					seen = seen || like
				}
			}
		}
	}
	if !seen {
		return Store{}, false
	}
	sort.Slice(st.Accounts, func(i, j int) bool { return st.Accounts[i].Name < st.Accounts[j].Name })
	return st, true
}

// childrenLike lists the sub-folders of dir. like says at least one of them
// holds one of the names in want; ok says that, or that dir has no folders
// (a fresh account's streams/ is empty).
func childrenLike(fsys fs.FS, dir string, want []string) (names []string, like, ok bool) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, false, false
	}
	names = []string{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		names = append(names, e.Name())
		if like {
			continue
		}
		// One listing of the child rather than a Stat per wanted name:
		// on a rooted FS each access opens every folder of the path, and
		// a restore stopped halfway leaves 100,000s of empty children.
		kids, err := fs.ReadDir(fsys, path.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, k := range kids {
			if slices.Contains(want, k.Name()) {
				like = true
				break
			}
		}
	}
	sort.Strings(names)
	return names, like, like || len(names) == 0
}
