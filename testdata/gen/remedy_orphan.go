package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

var orphanSaveRE = regexp.MustCompile(`copy (\S+) out of the store`)

// execOrphanCopyOut: the save step copied every store out (each orphaned
// copy the findings name among them). Start every server, wait past the
// orphan check (armed 30 s after meta recovery), then, as the action says,
// recreate each stream from the meta.inf of its saved copy
// ($JS.API.STREAM.CREATE with that config) and republish the messages
// `jsforensics extract` reads from the copied blocks, in sequence order.
func execOrphanCopyOut(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	all := append(append([]string{}, r.live...), r.stopped...)
	if err := r.start(ctx, all...); err != nil {
		return err
	}
	if err := pause(ctx, 45*time.Second); err != nil {
		return err
	}
	s := r.c.Server(r.live[0])
	nc, err := nats.Connect(fmt.Sprintf("nats://app:app@127.0.0.1:%d", s.ClientPort), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	servers := append(append([]WantServer{}, r.want.Servers...), wantStoppedAsServers(r.want.Stopped)...)
	done := map[string]bool{}
	var did []string
	for _, f := range fs {
		// The copy the save step names, in the saved stores.
		var rel string
		for _, st := range f.Steps {
			if m := orphanSaveRE.FindStringSubmatch(st.Text); st.Kind == "save" && m != nil {
				rel = strings.Trim(m[1], "'")
			}
		}
		saved := ""
		for _, w := range servers {
			if w.Name == f.Server && strings.HasPrefix(rel, w.StoreDir+"/") {
				saved = filepath.Join(r.saved, w.Name, filepath.FromSlash(strings.TrimPrefix(rel, w.StoreDir+"/")))
				// The cost step says the server deletes this copy: not
				// counted as a deletion, the stream's messages are.
				var keep []string
				for _, fb := range r.out.FoldersBefore[w.Name] {
					if fb != f.Account+"/"+f.Stream {
						keep = append(keep, fb)
					}
				}
				r.out.FoldersBefore[w.Name] = keep
			}
		}
		key := f.Account + " > " + f.Stream
		if done[key] {
			continue
		}
		if saved == "" {
			return fmt.Errorf("%s: no saved copy for %q", f.subject(), rel)
		}
		done[key] = true
		mi, err := os.ReadFile(filepath.Join(saved, "meta.inf"))
		if err != nil {
			return err
		}
		var cfg map[string]any
		if err := json.Unmarshal(mi, &cfg); err != nil {
			return fmt.Errorf("%s meta.inf: %w", saved, err)
		}
		delete(cfg, "Created")
		var created struct {
			Error *struct {
				Description string `json:"description"`
			} `json:"error"`
		}
		if err := apiRequest(ctx, nc, "$JS.API.STREAM.CREATE."+f.Stream, cfg, &created); err != nil {
			return err
		}
		if created.Error != nil {
			return fmt.Errorf("create %s: %s", f.Stream, created.Error.Description)
		}
		n, err := r.republish(ctx, nc, f.Account, f.Stream)
		if err != nil {
			return err
		}
		did = append(did, fmt.Sprintf("%s: $JS.API.STREAM.CREATE.%s with %s's meta.inf, %d message(s) republished from jsforensics extract", key, f.Stream, rel, n))
	}
	for _, i := range destructiveActions(fs[0]) {
		r.action(fs[0].Steps[i].Text, "started every server ("+strings.Join(all, ", ")+"), waited 45 s past meta recovery; "+strings.Join(did, "; "))
	}
	r.out.Note = "the copies the findings name were deleted by the servers as the cost step says; they are not counted as deleted folders, the streams' messages after the recreation are. `jsforensics dump blk --json` prints no payload, so the messages were read with `jsforensics extract` (same blocks)."
	return pause(ctx, 20*time.Second)
}

// republish writes the stream's messages as extract reads them from the
// bundle's blocks (one per sequence) and publishes each with a JetStream ack.
func (r *remedyRun) republish(ctx context.Context, nc *nats.Conn, acc, stream string) (int, error) {
	out := filepath.Join(filepath.Dir(r.saved), "extract-"+stream+".jsonl")
	cmd := exec.CommandContext(ctx, r.jsf, "extract", r.bundle, "--stream", acc+"/"+stream, "-o", out, "--force")
	if b, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("extract %s: %v\n%s", stream, err, b)
	}
	fh, err := os.Open(out)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	seen := map[uint64]bool{}
	n := 0
	for sc.Scan() {
		var m struct {
			Seq     uint64              `json:"seq"`
			Subject string              `json:"subject"`
			Headers map[string][]string `json:"headers"`
			Data    string              `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return n, err
		}
		if seen[m.Seq] {
			continue
		}
		seen[m.Seq] = true
		data, err := base64.StdEncoding.DecodeString(m.Data)
		if err != nil {
			return n, err
		}
		msg := nats.NewMsg(m.Subject)
		msg.Data = data
		for k, vs := range m.Headers {
			for _, v := range vs {
				msg.Header.Add(k, v)
			}
		}
		ack, err := nc.RequestMsgWithContext(ctx, msg)
		if err != nil {
			return n, fmt.Errorf("publish %s seq %d: %w", m.Subject, m.Seq, err)
		}
		if strings.Contains(string(ack.Data), `"error"`) {
			return n, fmt.Errorf("publish %s seq %d: %s", m.Subject, m.Seq, ack.Data)
		}
		n++
	}
	return n, sc.Err()
}
