package releases

import "fmt"

// The JetStream API level: each stream and consumer config a 2.11+ server
// stores carries the level its features need in its metadata
// (`_nats.req.level`, jetstream_versioning.go setStaticStreamMetadata /
// setStaticConsumerMetadata: message TTLs and subject delete markers 1;
// counters, atomic batches, message schedules, async persist 2; fast
// batches 4; consumer pause and priority groups 1, ack policy flow_control
// 4), and each release supports up to its own JSApiLevel. A server from
// 2.11.9 (2.12.0 on the 2.12 line) that loads an asset above its level, or
// whose config holds a field it does not know (decodeConfig: strict decode
// first), keeps it "unsupported" and offline: it logs "Detected unsupported
// stream '<account> > <stream>': unsupported - …" and answers the stream API
// with 10194 "stream is offline: …" (jetstream.go, jetstream_cluster.go
// newUnsupportedStreamAssignment; PR #7158).

// ReqLevelKey is the metadata key of an asset's required API level.
const ReqLevelKey = "_nats.req.level"

// APILevel is the JetStream API level nats-server v supports
// (jetstream_versioning.go JSApiLevel), read in the source of 2.11.8,
// 2.11.9, 2.11.17 (1), 2.12.0, 2.12.1, 2.12.4 (2), 2.12.5, 2.12.6, 2.12.7,
// 2.12.8, 2.12.15 (3), 2.14.10 (4), 2.15.0, 2.15.2, 2.15.3 (5). known is
// false for 2.10 (no API level: it does not read `_nats.req.level`) and for
// releases past the newest read of a line (SourceRead).
func APILevel(v string) (level int, known bool) {
	mi, pa, ok := SourceRead(v)
	if !ok {
		return 0, false
	}
	switch mi {
	case 11:
		return 1, true
	case 12:
		if pa >= 5 {
			return 3, true
		}
		return 2, true
	case 14:
		return 4, true
	case 15:
		return 5, true
	}
	return 0, false
}

// KeepsUnsupportedOffline says whether nats-server v loads an asset above
// its API level (or with a config field it does not know) as offline rather
// than not at all or as something else: from 2.11.9 and 2.12.0
// (newUnsupportedStreamAssignment; absent from 2.11.8 and 2.10.27). known is
// false where the source was not read.
func KeepsUnsupportedOffline(v string) (yes, known bool) {
	mi, pa, ok := SourceRead(v)
	if !ok {
		return false, false
	}
	switch mi {
	case 10:
		return false, true
	case 11:
		return pa >= 9, true
	}
	return true, true
}

// FirstReleaseOfLevel is the first release supporting API level n (the
// releases APILevel was read in), "" past the newest level known.
func FirstReleaseOfLevel(n int) string {
	switch {
	case n <= 1:
		return "2.11.0"
	case n == 2:
		return "2.12.0"
	case n == 3:
		return "2.12.5"
	case n == 4:
		return "2.14.0"
	case n == 5:
		return "2.15.0"
	}
	return ""
}

// StreamFieldLevels are stream config fields an older release does not
// know, with the API level that brought them (setStaticStreamMetadata,
// 2.14.10 and 2.15.3): a release below the level refuses the config
// ("unsupported - config error: unknown field").
var StreamFieldLevels = map[string]int{
	"allow_msg_ttl":             1,
	"subject_delete_marker_ttl": 1,
	"allow_msg_counter":         2,
	"allow_atomic":              2,
	"allow_msg_schedules":       2,
	"persist_mode":              2,
	"allow_batched":             4,
}

// LevelText is how a text names API level n and the first release with it.
func LevelText(n int) string {
	if r := FirstReleaseOfLevel(n); r != "" {
		return fmt.Sprintf("API level %d (nats-server %s or later)", n, r)
	}
	return fmt.Sprintf("API level %d", n)
}
