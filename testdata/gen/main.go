// Command gen re-creates the real-server bundles committed under
// testdata/bundles, by running real nats-server binaries on 127.0.0.1.
//
//	go run . all              # every scenario
//	go run . <scenario>...    # some scenarios
//	go run . list             # scenario names and descriptions
//	go run . big -out DIR [-size 1GiB] [-version v2.15.2]
//	go run . recover -dir DIR [-version v2.15.2]
//	go run . biglog -out DIR [-size 300MB] [-rounds 4] [-debug]
//	go run . cluster -out DIR [-streams 1500] [-buckets 300] [-consumers 1000] [-replicas 3] [-msgs 2000000]
//
// See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Env is what a scenario gets: a private scratch directory and the root of
// the committed bundles.
type Env struct {
	Scratch string // removed after the run unless -keep
	Out     string // testdata/bundles
}

// Scenario is one reproducible bundle (or set of bundles).
type Scenario struct {
	Name    string
	Doc     string
	Timeout time.Duration
	Run     func(ctx context.Context, env *Env) error
}

// allScenarios is the ordered list run by `all`. Add new ones here.
func allScenarios() []Scenario {
	var all []Scenario
	for _, f := range []func() []Scenario{
		healthyScenarios,      // scen_healthy.go (phase 1)
		leaderKillScenarios,   // scen_leaderkill.go
		phantomScenarios,      // scen_phantom.go (incident 000)
		orphanScenarios,       // scen_orphan.go
		superclusterScenarios, // scen_supercluster.go (incident 003)
		auditScenarios,        // scen_audit.go
		auditFaultScenarios,   // scen_audit.go
		auditFaults2Scenarios, // scen_audit2.go
		auditAccountScenarios, // scen_auditaccounts.go
		membershipScenarios,   // scen_membership.go (incident 002)
		encryptedScenarios,    // scen_encrypted.go
		lifecycleScenarios,    // scen_lifecycle.go
		renameScenarios,       // scen_rename.go (issue 12)
		scaledownScenarios,    // scen_scaledown.go (issue 12)
		ackLossScenarios,      // scen_ackloss.go (issue 12)
		perturbScenarios,      // scen_perturb.go (issue 21, testdata/perturbed)
		metaSnapScenarios,     // scen_metasnap.go (issue 12)
		tavLagScenarios,       // scen_tavlag.go (issue 21 case 3)
		deletedScenarios,      // scen_deleted.go (issue 21)
		metaSnapDelScenarios,  // scen_metasnapdel.go (issue 31, testdata/perturbed)
		emptyFoldersScenarios, // scen_emptyfolders.go (issue 11)
		diskFullScenarios,     // scen_diskfull.go (issue 18)
		kindsScenarios,        // scen_kinds.go (issue 18)
		streamFullScenarios,   // scen_streamfull.go (issue 18)
		domainsScenarios,      // scen_domains.go (issue 30)
		downgradeScenarios,    // scen_downgrade.go (issue 30)
		aheadScenarios,        // scen_ahead.go (issue 30)
		operatorScenarios,     // scen_operator.go (issue 30)

		consumerStuckScenarios,   // scen_consumerstuck.go (issue 30)
		consumerMissingScenarios, // scen_consumermissing.go (issue 30)
	} {
		all = append(all, f()...)
	}
	return all
}

// families are scenarios that run on any nats-server version, as
// `go run . <family>@<version> -out DIR`: a check of the analyzer on versions
// the committed bundles do not hold (never committed).
var families = map[string]func(v string) Scenario{
	"healthy": func(v string) Scenario {
		return Scenario{Name: "healthy-" + v, Run: func(ctx context.Context, env *Env) error {
			return healthy(ctx, env, "healthy-"+v, v, "any", []string{"a1", "a2", "a3"}, LayoutFlat())
		}}
	},
	"orphan": func(v string) Scenario {
		return Scenario{Name: "orphan-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return orphan(ctx, env, v) }}
	},
	"metasnap": func(v string) Scenario {
		return Scenario{Name: "metasnap-" + v, Timeout: 12 * time.Minute, Run: func(ctx context.Context, env *Env) error { return metaSnap(ctx, env, v) }}
	},
	"rename": func(v string) Scenario {
		return Scenario{Name: "rename-" + v, Timeout: 9 * time.Minute, Run: func(ctx context.Context, env *Env) error { return rename(ctx, env, v) }}
	},
	"scaledown": func(v string) Scenario {
		return Scenario{Name: "scaledown-" + v, Timeout: 9 * time.Minute, Run: func(ctx context.Context, env *Env) error { return scaledownOn(ctx, env, v) }}
	},
	"lostquorum": func(v string) Scenario {
		return Scenario{Name: "lostquorum-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return lostQuorumOn(ctx, env, v) }}
	},
	"phantom": func(v string) Scenario {
		return Scenario{Name: v + "-incident-phantom-peers", Run: func(ctx context.Context, env *Env) error { return phantomPeersOn(ctx, env, v) }}
	},
	"acked-lost": func(v string) Scenario {
		return Scenario{Name: "acked-lost-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return ackLossOn(ctx, env, v) }}
	},
	"diskfull": func(v string) Scenario {
		return Scenario{Name: "diskfull-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return diskFull(ctx, env, v, false) }}
	},
	"deleted": func(v string) Scenario {
		return Scenario{Name: "deleted-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return deletedStreams(ctx, env, v) }}
	},
	"streamfull": func(v string) Scenario {
		return Scenario{Name: "streamfull-" + v, Timeout: 6 * time.Minute, Run: func(ctx context.Context, env *Env) error { return streamFull(ctx, env, v) }}
	},
	"kinds": func(v string) Scenario {
		return Scenario{Name: "kinds-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return kinds(ctx, env, v) }}
	},
	"membership": func(v string) Scenario {
		return Scenario{Name: "membership-" + v, Timeout: 14 * time.Minute, Run: func(ctx context.Context, env *Env) error { return membership(ctx, env, v) }}
	},
	"domains": func(v string) Scenario {
		return Scenario{Name: "domains-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return domains(ctx, env, v, false) }}
	},
	"domains-recreated": func(v string) Scenario {
		return Scenario{Name: "domains-recreated-" + v, Timeout: 10 * time.Minute, Run: func(ctx context.Context, env *Env) error { return domains(ctx, env, v, true) }}
	},
	"domains-overtaken": func(v string) Scenario {
		return Scenario{Name: "domains-overtaken-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return domainsRun(ctx, env, v, true, true) }}
	},
	"downgrade": downgradeFamily, // downgrade@<newer>-to-<older>[-crash]
	"ahead":     aheadScenario,
	"operator":  operatorScenario,
	"consumerstuck": func(v string) Scenario {
		return Scenario{Name: "consumerstuck-" + v, Timeout: 8 * time.Minute, Run: func(ctx context.Context, env *Env) error { return consumerStuck(ctx, env, v) }}
	},
	"consumermissing": func(v string) Scenario {
		return Scenario{Name: "consumermissing-" + v, Timeout: 10 * time.Minute, Run: func(ctx context.Context, env *Env) error { return consumerMissing(ctx, env, v) }}
	},
	"emptyfolders": func(v string) Scenario {
		return Scenario{Name: "emptyfolders-" + v, Run: func(ctx context.Context, env *Env) error { return emptyFolders(ctx, env, "emptyfolders-"+v, v) }}
	},
}

func familyNames() []string {
	var out []string
	for n := range families {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s gen: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fs.String("out", "", "bundles root (default ../bundles); for `big`: the directory to write")
	keep := fs.Bool("keep", false, "keep scratch directories")
	size := fs.String("size", "1GiB", "big: minimum store size; biglog: minimum log size")
	version := fs.String("version", "v2.15.2", "big/recover: nats-server version")
	dir := fs.String("dir", "", "recover: store directory written by `big`")
	keepIndex := fs.Bool("keep-index", false, "recover: keep msgs/index.db (baseline: recovery from index.db)")
	msgs := fs.Int64("msgs", 4_000_000, "replicas: messages in the R3 stream")
	rounds := fs.Int("rounds", 4, "biglog: churn rounds (leader kills) before the log is repeated")
	debug := fs.Bool("debug", false, "biglog: servers log at debug level")
	seed := fs.Int64("seed", 1, "perturb: seed of the draws")
	draws := fs.Int("n", 12, "perturb: draws per version")
	samples := fs.String("samples", "", "perturb: keep one agreeing draw of each sample class per version under this directory")
	versions := fs.String("versions", "v2.10.27,v2.11.17,v2.12.15,v2.14.10,v2.15.3", "perturb: comma-separated nats-server versions")
	only := fs.String("classes", "", "perturb: draw only these comma-separated classes (default: all)")
	watch := fs.Duration("watch", 7*time.Minute, "readd: how long to watch the meta group after the removal")
	famList := fs.String("families", "", "remedies: comma-separated scenario families (default: every family with a remedy executor)")
	fixtureList := fs.String("fixtures", "", "remedies: committed bundles (testdata/bundles/NAME) to carry the remedies out on instead of families")
	fs.BoolVar(&remedyScaleDown, "scale-down", false, "remedies: carry stream-quorum-peer-remove out its other way, the scale-down to R1 and back, instead of the stream peer removals")
	fs.StringVar(&remedyOnly, "remedy", "", "remedies: carry out only this remedy id (the others of the report are left out of the outcome)")
	var big BigCluster
	fs.IntVar(&big.Streams, "streams", 1500, "cluster: streams of 5 messages")
	fs.IntVar(&big.Replicas, "replicas", 3, "cluster: replicas of those streams and of the KV buckets (consumers take their stream's)")
	fs.IntVar(&big.Buckets, "buckets", 300, "cluster: KV buckets")
	fs.IntVar(&big.Consumers, "consumers", 1000, "cluster: durable consumers on those streams")
	if len(os.Args) < 2 {
		usage()
		return 2
	}
	cmd := os.Args[1]
	// Flags may come before, between or after scenario names.
	var args []string
	for rest := os.Args[2:]; ; {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		args = append(args, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	scenarios := allScenarios()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		logf("interrupted: killing servers")
		killAll()
		os.Exit(130)
	}()
	defer killAll()

	switch cmd {
	case "list":
		for _, s := range scenarios {
			fmt.Printf("%-36s %s\n", s.Name, s.Doc)
		}
		return 0
	case "big", "biglog":
		if *out == "" {
			logf("%s: -out DIR is required", cmd)
			return 2
		}
		n, err := parseSize(*size)
		if err != nil {
			logf("%s: %v", cmd, err)
			return 2
		}
		if cmd == "biglog" {
			return report(withDeadline(ctx, 30*time.Minute, func(ctx context.Context) error {
				return runBigLog(ctx, *out, n, *version, *rounds, *debug)
			}))
		}
		return report(withDeadline(ctx, 60*time.Minute, func(ctx context.Context) error { return runBig(ctx, *out, n, *version) }))
	case "replicas":
		if *out == "" {
			logf("replicas: -out DIR is required")
			return 2
		}
		return report(withDeadline(ctx, 60*time.Minute, func(ctx context.Context) error { return runReplicas(ctx, *out, *msgs, *version) }))
	case "cluster":
		if *out == "" {
			logf("cluster: -out DIR is required")
			return 2
		}
		big.Msgs = *msgs
		if !flagSet(fs, "msgs") {
			big.Msgs = 2_000_000
		}
		return report(withDeadline(ctx, 90*time.Minute, func(ctx context.Context) error { return runBigCluster(ctx, *out, *version, big) }))
	case "clusterstart":
		if *out == "" {
			logf("clusterstart: -out DIR (of an earlier `cluster`) is required")
			return 2
		}
		return report(withDeadline(ctx, 30*time.Minute, func(ctx context.Context) error { return runClusterStart(ctx, *out, *version) }))
	case "perturb":
		vs := strings.Split(*versions, ",")
		var cs []string
		if *only != "" {
			cs = strings.Split(*only, ",")
		}
		return report(withDeadline(ctx, 150*time.Minute, func(ctx context.Context) error { return runPerturb(ctx, *out, *samples, *seed, *draws, vs, cs) }))
	case "remedies":
		var fams, fxs []string
		if *famList != "" {
			fams = strings.Split(*famList, ",")
		} else {
			fams = remedyFamilies
		}
		if *fixtureList != "" {
			fxs = strings.Split(*fixtureList, ",")
		}
		return report(withDeadline(ctx, 6*time.Hour, func(ctx context.Context) error {
			return runRemedies(ctx, *out, strings.Split(*versions, ","), fams, fxs)
		}))
	case "readd":
		if *out == "" {
			logf("readd: -out DIR is required")
			return 2
		}
		vs := strings.Split(*versions, ",")
		return report(withDeadline(ctx, time.Duration(len(vs))*(*watch+3*time.Minute), func(ctx context.Context) error {
			var errs []error
			for _, v := range vs {
				if err := runReadd(ctx, *out, v, *watch); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", v, err))
				}
				killAll()
			}
			return errors.Join(errs...)
		}))
	case "recover":
		if *dir == "" {
			logf("recover: -dir DIR is required")
			return 2
		}
		return report(withDeadline(ctx, 30*time.Minute, func(ctx context.Context) error { return runRecover(ctx, *dir, *version, *keepIndex) }))
	}

	var todo []Scenario
	if cmd == "all" {
		todo = scenarios
	} else {
		for _, name := range append([]string{cmd}, args...) {
			if fam, v, ok := strings.Cut(name, "@"); ok {
				mk := families[fam]
				if mk == nil || *out == "" {
					logf("%s: a family is one of %v, run with -out DIR (never over the committed bundles)", name, familyNames())
					return 2
				}
				todo = append(todo, mk(v))
				continue
			}
			found := false
			for _, s := range scenarios {
				if s.Name == name {
					todo, found = append(todo, s), true
				}
			}
			if !found {
				logf("unknown scenario %q (try `go run . list`)", name)
				return 2
			}
		}
	}
	outRoot := *out
	if outRoot == "" {
		outRoot = filepath.Join("..", "bundles")
	}
	failed := 0
	for _, s := range todo {
		scratch, err := os.MkdirTemp("", "jsf-gen-"+s.Name+"-")
		if err != nil {
			logf("%v", err)
			return 1
		}
		start := time.Now()
		logf("=== %s (scratch %s)", s.Name, scratch)
		timeout := s.Timeout
		if timeout == 0 {
			timeout = 10 * time.Minute
		}
		err = withDeadline(ctx, timeout, func(ctx context.Context) error { return s.Run(ctx, &Env{Scratch: scratch, Out: outRoot}) })
		killAll()
		if err != nil {
			failed++
			logf("--- FAIL %s after %v: %v (scratch kept: %s)", s.Name, time.Since(start).Round(time.Second), err, scratch)
			continue
		}
		logf("--- ok %s in %v", s.Name, time.Since(start).Round(time.Second))
		if !*keep {
			os.RemoveAll(scratch)
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// withDeadline runs f with a context that expires after d; if f has not
// returned 30 s after that, every server is killed and the program exits.
func withDeadline(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	wd := time.AfterFunc(d+30*time.Second, func() {
		logf("watchdog: run exceeded %v; killing servers", d)
		killAll()
		os.Exit(1)
	})
	defer wd.Stop()
	return f(ctx)
}

func report(err error) int {
	if err != nil {
		logf("error: %v", err)
		return 1
	}
	return 0
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go run . all | list | <scenario>... [-out DIR] [-keep]")
	fmt.Fprintln(os.Stderr, "       go run . big -out DIR [-size 1GiB] [-version v2.15.2]")
	fmt.Fprintln(os.Stderr, "       go run . recover -dir DIR [-version v2.15.2] [-keep-index]")
	fmt.Fprintln(os.Stderr, "       go run . cluster -out DIR [-streams 1500] [-buckets 300] [-consumers 1000] [-replicas 3] [-msgs 2000000]")
	fmt.Fprintln(os.Stderr, "       go run . perturb [-seed 1] [-n 12] [-versions v2.10.27,v2.11.17,v2.12.15,v2.14.10,v2.15.3] [-classes a,b] [-out DIR] [-samples DIR]")
	fmt.Fprintln(os.Stderr, "       go run . remedies [-versions v2.10.27,…] [-families scaledown,…] -out DIR | -fixtures NAME,… [-out DIR] [-remedy ID] [-scale-down]")
	fmt.Fprintln(os.Stderr, "       go run . readd [-versions v2.10.27,…] [-watch 7m] -out DIR")
	fmt.Fprintln(os.Stderr, "       go run . biglog -out DIR [-size 300MB] [-rounds 4] [-debug] [-version v2.15.2]")
}

// flagSet says whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func parseSize(s string) (int64, error) {
	units := []struct {
		suf string
		m   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suf) {
			var f float64
			if _, err := fmt.Sscanf(strings.TrimSuffix(s, u.suf), "%g", &f); err != nil {
				return 0, fmt.Errorf("bad size %q", s)
			}
			return int64(f * float64(u.m)), nil
		}
	}
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n, nil
}
