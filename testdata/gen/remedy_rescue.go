package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// execMetaRescue: meta-quorum-rescue. Start the servers that answered the
// captures; with no meta leader in 30 s (the state the remedy is for), send
// the step's $JS.API.META.RESCUE request once with the system account and
// gather every server's answer (the subject is a broadcast: each server
// answers for itself, jetstream_api.go jsMetaRescueRequest); wait for a
// meta leader; then each server removal of the next step, one at a time,
// each once the meta group is one smaller and led.
func execMetaRescue(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	for _, n := range r.live {
		if err := r.c.Server(n).Start(ctx); err != nil {
			return err
		}
		r.started[n] = true
	}
	if waitAnyMetaLeader(ctx, r.c, 30*time.Second) == nil {
		return fmt.Errorf("a meta leader without the rescue: %s", metaSize(ctx, r.c.Server(r.live[0])))
	}
	r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: started %s: no meta leader in 30 s (%s)", strings.Join(r.live, ", "), metaSize(ctx, r.c.Server(r.live[0]))))
	f := fs[0]
	rest := f
	rest.Steps = nil
	nc, err := sysConn(r.c.Server(r.live[0]))
	if err != nil {
		return err
	}
	defer nc.Close()
	rescued := false
	for _, i := range destructiveActions(f) {
		st := f.Steps[i]
		if rescued || len(st.Commands) == 0 || !strings.Contains(st.Commands[0], "$JS.API.META.RESCUE") {
			rest.Steps = append(rest.Steps, st)
			continue
		}
		rescued = true
		answers, err := broadcastRequest(ctx, nc, st.Commands[0], len(r.live), 10*time.Second)
		if err != nil {
			return err
		}
		werr := waitAnyMetaLeader(ctx, r.c, 60*time.Second)
		d := fmt.Sprintf("%s -> %d answer(s): %s; meta %s", requestRE.FindString(st.Commands[0]), len(answers), strings.Join(answers, " | "), metaSize(ctx, r.c.Server(r.live[0])))
		if werr != nil {
			d += " (" + werr.Error() + ")"
		}
		r.action(st.Text, d)
		if werr != nil {
			return werr
		}
	}
	if !rescued {
		return fmt.Errorf("no $JS.API.META.RESCUE command in the remedy's steps")
	}
	if err := removeEach(ctx, r, rest, r.live[0]); err != nil {
		return err
	}
	// Past the orphan check (30 s after meta recovery).
	return pause(ctx, 40*time.Second)
}

// broadcastRequest publishes a command's request once and gathers answers
// until want have come or timeout has passed.
func broadcastRequest(ctx context.Context, nc *nats.Conn, command string, want int, timeout time.Duration) ([]string, error) {
	m := requestRE.FindStringSubmatch(command)
	if m == nil {
		return nil, fmt.Errorf("no request in %q", command)
	}
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(m[1], inbox, []byte(m[2])); err != nil {
		return nil, err
	}
	var out []string
	deadline := time.Now().Add(timeout)
	for len(out) < want {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			break
		}
		msg, err := sub.NextMsg(left)
		if err != nil {
			break
		}
		var compact json.RawMessage
		if json.Unmarshal(msg.Data, &compact) == nil {
			out = append(out, string(compact))
		} else {
			out = append(out, string(msg.Data))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no answer in %v", m[1], timeout)
	}
	return out, nil
}

var sameNamesRE = regexp.MustCompile(`start (\d+) server\(s\) named (.+?) on EMPTY stores`)

// execSameNames: meta-quorum-same-names. Start the servers that answered
// the captures; with no meta leader in 30 s, start servers under the names
// the step gives on empty stores (the prepared temporary servers, renamed)
// and wait for a meta leader.
func execSameNames(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	for _, n := range r.live {
		if err := r.c.Server(n).Start(ctx); err != nil {
			return err
		}
		r.started[n] = true
	}
	if waitAnyMetaLeader(ctx, r.c, 30*time.Second) == nil {
		return fmt.Errorf("a meta leader without the new servers: %s", metaSize(ctx, r.c.Server(r.live[0])))
	}
	r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: started %s: no meta leader in 30 s (%s)", strings.Join(r.live, ", "), metaSize(ctx, r.c.Server(r.live[0]))))
	f := fs[0]
	for _, i := range destructiveActions(f) {
		st := f.Steps[i]
		m := sameNamesRE.FindStringSubmatch(st.Text)
		if m == nil {
			continue
		}
		names := strings.Split(m[2], ", ")
		if len(names) > len(r.temps) {
			return fmt.Errorf("%d servers asked, %d prepared", len(names), len(r.temps))
		}
		for k, name := range names {
			if r.c.Server(name) != nil {
				return fmt.Errorf("server %s is in the bundle", name)
			}
			s := r.c.Server(r.temps[k])
			s.Name = name
			if err := s.Start(ctx); err != nil {
				return err
			}
			r.started[name] = true
		}
		err := waitAnyMetaLeader(ctx, r.c, 120*time.Second)
		r.action(st.Text, fmt.Sprintf("started %s on empty stores; meta %s", strings.Join(names, ", "), metaSize(ctx, r.c.Server(r.live[0]))))
		if err != nil {
			return err
		}
		// Past the orphan check (30 s after meta recovery).
		return pause(ctx, 40*time.Second)
	}
	return fmt.Errorf("no step names the servers to start")
}
