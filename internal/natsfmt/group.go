package natsfmt

import "strings"

// MetaGroup is the meta group's name: its folder under the system
// account's _js_ and its name in /raftz and the logs.
const MetaGroup = "_meta_"

// GroupKind is what a raft group replicates, told by its name
// (jetstream_cluster.go: the meta group is _meta_, a stream's group is
// named S-R<replicas><storage>-…, a consumer's C-R…).
type GroupKind string

const (
	GroupMeta     GroupKind = "meta"
	GroupStream   GroupKind = "stream"
	GroupConsumer GroupKind = "consumer"
	GroupOther    GroupKind = "other"
)

// KindOfGroup tells a raft group's kind from its name.
func KindOfGroup(name string) GroupKind {
	switch {
	case name == MetaGroup:
		return GroupMeta
	case strings.HasPrefix(name, "S-"):
		return GroupStream
	case strings.HasPrefix(name, "C-"):
		return GroupConsumer
	}
	return GroupOther
}
