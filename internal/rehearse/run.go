package rehearse

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one running server of the sandbox.
type process struct {
	mb      *member
	cmd     *exec.Cmd
	logFile string
	out     string // its stdout and stderr

	mu      sync.Mutex
	done    chan struct{}
	exitErr error
	version string // from /varz
	up      bool   // answered /varz at least once
	// stillUpAtEnd: the process ran when the watch ended.
	stillUpAtEnd bool
}

// start starts the server and returns once the process runs; it does not
// wait for the server to answer.
func start(bin string, mb *member, conf string) (*process, error) {
	p := &process{mb: mb, logFile: filepath.Join(mb.Dir, "server.log"), out: filepath.Join(mb.Dir, "stdout-stderr.txt"), done: make(chan struct{})}
	out, err := os.OpenFile(p.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(bin, "-c", conf)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Dir = mb.Dir
	// The server dies with this process, whatever stops it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", mb.Name, err)
	}
	go func() {
		err := p.cmd.Wait()
		out.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop stops the server by its PID: SIGTERM, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

var httpClient = &http.Client{Timeout: 3 * time.Second}

// get fetches a monitoring endpoint of the server into v.
func (p *process) get(ctx context.Context, endpoint string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", p.mb.HTTPPort, endpoint), nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(v)
}

type varz struct {
	Version string `json:"version"`
}

type jsz struct {
	Meta *struct {
		Leader string `json:"leader"`
	} `json:"meta_cluster"`
	Accounts []struct {
		Name    string `json:"name"`
		ID      string `json:"id"`
		Streams []struct {
			Name    string `json:"name"`
			Cluster *struct {
				Leader string `json:"leader"`
			} `json:"cluster"`
			State struct {
				Msgs     uint64 `json:"messages"`
				FirstSeq uint64 `json:"first_seq"`
				LastSeq  uint64 `json:"last_seq"`
			} `json:"state"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

// poll asks the server what it is and who leads its meta group.
func (p *process) poll(ctx context.Context) (leader string) {
	if !p.running() {
		return ""
	}
	var v varz
	if err := p.get(ctx, "/varz", &v); err == nil {
		p.mu.Lock()
		p.up, p.version = true, v.Version
		p.mu.Unlock()
	}
	var j jsz
	if err := p.get(ctx, "/jsz", &j); err == nil && j.Meta != nil {
		return j.Meta.Leader
	}
	return ""
}

var levelLine = regexp.MustCompile(`\[(WRN|ERR|FTL)\]`)

// lines returns the server's warning, error and fatal lines (at most max)
// and its fatal line, or the end of a panic, "" when there is none.
func (p *process) lines(max int) (lines []string, fatal string) {
	for _, f := range []string{p.logFile, p.out} {
		r, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if m := levelLine.FindStringSubmatch(l); m != nil {
				if len(lines) < max && f == p.logFile {
					lines = append(lines, l)
				}
				if m[1] == "FTL" && fatal == "" {
					fatal = strings.TrimSpace(l)
				}
			}
			if strings.HasPrefix(l, "panic:") && fatal == "" {
				fatal = strings.TrimSpace(l)
			}
		}
		r.Close()
	}
	return lines, fatal
}

// folders lists a store's stream and consumer folders ("ACC/STREAM",
// "ACC/STREAM/CONSUMER").
func folders(root string) map[string]bool {
	out := map[string]bool{}
	accs, _ := os.ReadDir(root)
	for _, a := range accs {
		if !a.IsDir() {
			continue
		}
		streams, _ := os.ReadDir(filepath.Join(root, a.Name(), "streams"))
		for _, s := range streams {
			if !s.IsDir() {
				continue
			}
			out[a.Name()+"/"+s.Name()] = true
			obs, _ := os.ReadDir(filepath.Join(root, a.Name(), "streams", s.Name(), "obs"))
			for _, o := range obs {
				if o.IsDir() {
					out[a.Name()+"/"+s.Name()+"/"+o.Name()] = true
				}
			}
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// serverVersion asks the binary its release ("v2.15.3").
func serverVersion(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", bin, err, strings.TrimSpace(string(out)))
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", fmt.Errorf("%s --version printed nothing", bin)
	}
	return strings.TrimPrefix(f[len(f)-1], "v"), nil
}

// removeAll removes the scratch folder; a server still writing into it is
// stopped before this is called.
func removeAll(dir string) error {
	err := os.RemoveAll(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
