package analysis

import (
	"fmt"
	"path"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
)

// What a server's meta recovery keeps, and the way out of a corrupt meta
// snapshot: judgements the checks share over the meta state the loader
// read (load_metasnap.go).

// recoveredMeta is the meta state srv holds once its meta layer recovers,
// against which its stored streams are judged: its own, or, where its meta
// snapshot is corrupt, what its version really recovers. why says how it
// was chosen; skip, when meta is nil, why it cannot be judged.
func recoveredMeta(p *check.Pass, srv *model.Server) (meta *model.MetaState, why, skip string) {
	switch {
	case srv.Meta == nil:
		return nil, "", "its store holds no readable meta state, so what its meta recovery keeps cannot be told"
	case !srv.Meta.SnapshotCorrupt:
		return srv.Meta, "", ""
	}
	// README versions table, row metasnap (refusesCorruptMetaSnapshot).
	switch refuses, known := releases.RefusesCorruptMetaSnapshot(srv.Version); {
	case refuses:
		return nil, "", fmt.Sprintf("its meta snapshot is corrupt and %s does not start JetStream on it, so no orphan cleanup runs (see store-corrupt)", srv.Version)
	case !known && srv.Version != "":
		return nil, "", fmt.Sprintf("its meta snapshot is corrupt and whether %s drops it (2.12 and older) or refuses to start JetStream on it (2.14+) cannot be told, so what its meta recovery keeps cannot be told", srv.Version)
	}
	old := "nats-server 2.12 and older"
	if srv.Version == "" {
		old = "if it runs 2.12 or older (its version is not in the bundle), nats-server"
	}
	if srv.Meta.AfterSnapshot > 0 {
		return srv.Meta, fmt.Sprintf("its meta snapshot is corrupt: %s drops it and recovers only what its meta WAL holds after it (%d entr%s), and counts itself current; the deletion comes at the one orphan check, 30 s after meta recovery, and only if a meta leader is known by then (checkForOrphans: \"skipping check for orphans, no meta-leader\" otherwise, never run again until a restart) and, on 2.11.17, not in every run even then (2026-12-02, the same damaged state restarted: deleted in some runs, no meta leader at the check in others, the check run and nothing deleted in others), so the deletion is a risk of the next start, not a certainty", old, srv.Meta.AfterSnapshot, map[bool]string{true: "y", false: "ies"}[srv.Meta.AfterSnapshot == 1]), ""
	}
	leader := p.Facts.HighestMetaTerm(p.Model)
	if leader == nil {
		return nil, "", "its meta snapshot is corrupt, its meta WAL holds nothing after it, and no server holds a readable meta snapshot: what the meta leader will install cannot be told"
	}
	return leader.Meta, fmt.Sprintf("its meta snapshot is corrupt and its meta WAL holds nothing after it: %s drops the snapshot and the meta leader installs its own (judged against the meta state of %s)", old, leader.Name), ""
}

// metaSnapshotRemedy is what to do about a corrupt meta snapshot. What the
// generator's remedy run proved (metasnap-v2.12.1, metasnap-v2.15.2): with
// the damaged servers' snapshots and meta WALs moved out of their stores,
// the server with the intact snapshot is elected and installs it on them,
// and every stream comes back whole.
func metaSnapshotRemedy(m *model.Model, c model.Corruption) remedy.Prescription {
	meta := path.Dir(path.Dir(c.File))
	v := serverVersion(m, c.Server)
	order := metaSnapStartOrder(v)
	return remedy.Prescribe("meta-snapshot-move-aside", remedy.Args{"server": m.Name(c.Server), "meta": meta, "version": model.DashIfEmpty(v),
		"stagger": order == "stagger", "together": order == "together", "ordercannottell": order == ""})
}

// metaSnapStartOrder is the start order of the damaged servers, with a
// majority of the meta peers damaged, that the remedy runs proved on v's
// release line (go run . remedies; testdata/remedies/metasnap-v2.11.17*.json,
// testdata/bundles/metasnap-*/remedy-outcome.json): "stagger" (the intact
// server and one damaged one, then the others once the intact one leads)
// on 2.11, where all together elected a damaged server; "together" on
// 2.12, 2.14 and 2.15, where 2.12.1 elected no leader from the intact
// server and one damaged one; "" where the runs show no order that works
// (2.10.27: together elected a damaged server in 2 runs of 2, the intact
// server and one damaged one no leader in 2 runs of 3; testdata/remedies/metasnap-v2.10.27*)
// or where no run was made (2.13, 2.16+).
func metaSnapStartOrder(v string) string {
	ma, mi, _, ok := releases.ParseVersion(v)
	switch {
	case !ok || ma != 2:
		return ""
	case mi == 11:
		return "stagger"
	case mi == 12 || mi == 14 || mi == 15:
		return "together"
	}
	return ""
}
